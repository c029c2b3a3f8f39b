import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  nodeFlagsOf,
  WEFT_EMBEDDED_NODE_FLAGS,
  WEFT_MAINS,
  WEFT_SERVICE_NODE_FLAGS,
  type WeftService,
} from '@weft/test-support';

/**
 * Every way a user starts a Weft server passes the V8 flags the tests and benchmarks run it with:
 * the embedded process's (WEFT_EMBEDDED_NODE_FLAGS) in the root and all-in-one start scripts and
 * the image's command, a service's (WEFT_SERVICE_NODE_FLAGS) in each service's start script and
 * its command in docker-compose.yml.
 */
const root = join(__dirname, '..', '..', '..');
const read = (path: string): string => readFileSync(join(root, path), 'utf8');
const startScript = (packageJson: string): string | undefined =>
  (JSON.parse(read(packageJson)) as { scripts?: Record<string, string> }).scripts?.start;
/** `node <flags> <something>dist/main.js`, the words of a command. */
const startsWithFlags = (words: readonly string[], flags: readonly string[]): boolean =>
  words.length === flags.length + 2 &&
  words[0] === 'node' &&
  flags.every((flag, index) => words[index + 1] === flag) &&
  /dist\/main\.js$/.test(words.at(-1)!);
const embedded = (packageJson: string): boolean =>
  packageJson === 'package.json' || packageJson === 'services/all-in-one/package.json';

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
      const flags = embedded(packageJson) ? WEFT_EMBEDDED_NODE_FLAGS : WEFT_SERVICE_NODE_FLAGS;
      expect(startsWithFlags(startScript(packageJson)!.split(' '), flags)).toBe(true);
    },
  );

  it("the image's command passes them", () => {
    const commands = read('Dockerfile')
      .split('\n')
      .filter((line) => line.startsWith('CMD '))
      .map((line) => JSON.parse(line.slice('CMD '.length)) as string[]);
    expect(commands).toHaveLength(1);
    expect(commands[0]!.at(-1)).toBe('services/all-in-one/dist/main.js');
    expect(startsWithFlags(commands[0]!, WEFT_EMBEDDED_NODE_FLAGS)).toBe(true);
  });

  it('the tests and benchmarks start each process with its set', () => {
    const services = Object.keys(WEFT_MAINS) as WeftService[];
    expect(services).toContain('weft');
    for (const service of services)
      expect(nodeFlagsOf(service)).toBe(service === 'weft' ? WEFT_EMBEDDED_NODE_FLAGS : WEFT_SERVICE_NODE_FLAGS);
  });

  it('every Weft service of docker-compose.yml passes them', () => {
    const commands = [...read('docker-compose.yml').matchAll(/command: (\[.*'node'.*\])/g)].map(
      ([, list]) => JSON.parse(list!.replaceAll("'", '"')) as string[],
    );
    expect(commands.map((words) => words.at(-1)).sort()).toEqual(
      ['engine', 'gateway', 'process-catalog', 'testing', 'trigger'].map(
        (service) => `services/${service}/dist/main.js`,
      ),
    );
    for (const words of commands) expect(startsWithFlags(words, WEFT_SERVICE_NODE_FLAGS)).toBe(true);
  });
});
