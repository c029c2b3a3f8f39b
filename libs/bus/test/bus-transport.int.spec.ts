import { createLogger } from '@weft/observability';
import { NatsBus } from '../src/index.js';
import { describeBusTransport } from './bus-transport-suite.js';

const servers = process.env.WEFT_TEST_NATS_URL ?? '';
// scripts/run-tests.sh sets it; without it the suite fails instead of reaching whatever listens on 4222.
if (!servers) throw new Error('WEFT_TEST_NATS_URL is not set (run the tests through scripts/run-tests.sh)');

// The 500 case logs the handler's error on purpose; keep the test output clean.
const logger = createLogger('bus', { level: 'silent' });

describeBusTransport('NatsBus', () => NatsBus.connect({ servers, name: 'bus-transport-test', logger }));
