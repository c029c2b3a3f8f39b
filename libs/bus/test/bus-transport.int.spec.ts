import { createLogger } from '@weft/observability';
import { NatsBus } from '../src/index.js';
import { describeBusTransport } from './bus-transport-suite.js';

const servers = process.env.WEFT_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

// The 500 case logs the handler's error on purpose; keep the test output clean.
const logger = createLogger('bus', { level: 'silent' });

describeBusTransport('NatsBus', () => NatsBus.connect({ servers, name: 'bus-transport-test', logger }));
