// Writes infra/nats/auth.conf (NATS users and permissions) from the subject map in contracts/src/bus.
// Runs the TypeScript sources directly (Node strips the types): `pnpm nats-config`.
// With --check, exits 1 when the committed file differs from what the map gives.
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { registerHooks } from 'node:module';
import { fileURLToPath } from 'node:url';

// Sources import siblings as './x.js' (NodeNext); resolve them to the .ts file beside.
registerHooks({
  resolve(specifier, context, next) {
    if (specifier.startsWith('.') && specifier.endsWith('.js') && context.parentURL?.endsWith('.ts')) {
      const source = new URL(specifier.replace(/\.js$/, '.ts'), context.parentURL);
      if (existsSync(fileURLToPath(source))) return next(source.href, context);
    }
    return next(specifier, context);
  },
});

const { natsAuthorization, renderNatsAuthorization, subjectSpecsOf } =
  await import('../libs/bus/src/adapters/nats/nats-authorization.ts');
const contracts = await import('../contracts/src/index.ts');
const target = fileURLToPath(new URL('../infra/nats/auth.conf', import.meta.url));
const rendered = renderNatsAuthorization(natsAuthorization(subjectSpecsOf(contracts)));

if (process.argv.includes('--check')) {
  const committed = await readFile(target, 'utf8').catch(() => '');
  if (committed !== rendered) {
    console.error('infra/nats/auth.conf is out of date with the subject map: run `pnpm nats-config`');
    process.exit(1);
  }
  console.log('infra/nats/auth.conf matches the subject map');
} else {
  await writeFile(target, rendered);
  console.log('wrote infra/nats/auth.conf');
}
