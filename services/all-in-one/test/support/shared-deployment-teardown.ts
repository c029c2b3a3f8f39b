// jest globalTeardown: see shared-deployment.ts. Loaded only when the run shares a deployment
// (an e2e run after `pnpm build`): unit runs need no build. Node's resolver loads this file, so the
// source resolver (resolve-sources.ts) is required by its extensionless name, before the harness.
/* eslint-disable @typescript-eslint/no-require-imports -- the order of loading is the point */
export default async function globalTeardown(): Promise<void> {
  if (process.env.WEFT_E2E_SHARED !== '1') return;
  require('./resolve-sources');
  await (require('./shared-deployment.js') as typeof import('./shared-deployment.js')).globalTeardown();
}
