/**
 * The old names of @weft/test-support's servers, for harnesses not yet moved to it
 * (support/deployment.ts): import from '@weft/test-support' instead; delete this file once unused.
 */
export {
  createTestDatabase as createOwnDatabase,
  freePort,
  startNatsServer as startOwnNatsServer,
  type TestDatabase as OwnDatabase,
  type TestNatsServer as OwnNatsServer,
} from '@weft/test-support';
