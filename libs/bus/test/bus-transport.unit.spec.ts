import { createLogger } from '@weft/observability';
import { InMemoryBus } from '../src/index.js';
import { describeBusTransport } from './bus-transport-suite.js';

// The 500 case logs the handler's error on purpose; keep the test output clean.
const broker = new InMemoryBus({ logger: createLogger('bus', { level: 'silent' }) });

describeBusTransport('InMemoryBus', async () => broker.connection());
afterAll(() => broker.close());
