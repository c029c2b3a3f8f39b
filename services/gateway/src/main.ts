import 'reflect-metadata';
import { runServiceProcess } from '@weft/runtime';
import { bootstrapKeyNotice } from './application/bootstrap-notice.js';
import { createGateway } from './gateway.js';

/** The gateway as its own process (distributed mode): `pnpm --filter @weft/gateway start`. */
runServiceProcess('gateway', async ({ config, store, bus }) => {
  const gateway = await createGateway({ config, store, bus });
  const url = await gateway.listen();
  process.stdout.write(`gateway listening at ${url}\n`);
  // Distributed: stdout is collected as logs, so the generated key stays in its file only.
  const notice = bootstrapKeyNotice(gateway.bootstrap, { showKey: false });
  if (notice) process.stdout.write(notice);
  return { stop: () => gateway.close() };
});
