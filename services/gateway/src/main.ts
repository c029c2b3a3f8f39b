import 'reflect-metadata';
import { runServiceProcess } from '@weft/runtime';
import { createGateway } from './gateway.js';

/** The gateway as its own process (distributed mode): `pnpm --filter @weft/gateway start`. */
runServiceProcess('gateway', async ({ config, store, bus }) => {
  const gateway = await createGateway({ config, store, bus });
  const url = await gateway.listen();
  process.stdout.write(`gateway listening at ${url}\n`);
  if (gateway.bootstrap.generatedKey) {
    process.stdout.write(
      `A system API key was created (shown once; also in ${gateway.bootstrap.keyFile ?? ''}):\n${gateway.bootstrap.generatedKey}\n`,
    );
  }
  return { stop: () => gateway.close() };
});
