import { InMemoryBus } from '../src/index.js';
import { describeBusTransport } from './bus-transport-suite.js';

const broker = new InMemoryBus();

describeBusTransport('InMemoryBus', async () => broker.connection());
afterAll(() => broker.close());
