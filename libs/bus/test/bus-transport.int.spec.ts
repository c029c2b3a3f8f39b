import { NatsBus } from '../src/index.js';
import { describeBusTransport } from './bus-transport-suite.js';

const servers = process.env.WEFT_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

describeBusTransport('NatsBus', () => NatsBus.connect({ servers, name: 'bus-transport-test' }));
