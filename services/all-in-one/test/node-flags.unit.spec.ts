import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { WEFT_NODE_FLAGS } from '@weft/test-support';

/**
 * Every way a user starts a Weft server passes the V8 flags the tests and benchmarks run it with
 * (WEFT_NODE_FLAGS): the start scripts, embedded and per service, and the image's NODE_OPTIONS.
 */
const root = join(__dirname, '..', '..', '..');
const startScript = (packageJson: string): string | undefined =>
  (JSON.parse(readFileSync(join(root, packageJson), 'utf8')) as { scripts?: Record<string, string> }).scripts?.start;

describe('V8 flags of a Weft process', () => {
  const servers = readdirSync(join(root, 'services')).filter(
    (service) => service !== 'testing-cli' && startScript(`services/${service}/package.json`) !== undefined,
  );

  it('covers every service that starts a server', () => {
    expect(servers.sort()).toEqual(['all-in-one', 'engine', 'gateway', 'process-catalog', 'testing', 'trigger']);
  });

  it.each(['package.json', ...servers.map((service) => `services/${service}/package.json`)])(
    '%s starts node with them',
    (packageJson) => {
      expect(startScript(packageJson)).toMatch(new RegExp(`^node ${WEFT_NODE_FLAGS.join(' ')} \\S*dist/main\\.js$`));
    },
  );

  it('the image sets them as NODE_OPTIONS', () => {
    const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
    expect(dockerfile).toContain(`NODE_OPTIONS=${WEFT_NODE_FLAGS.join(' ')} `);
  });
});
