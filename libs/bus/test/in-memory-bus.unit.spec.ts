import { InMemoryBus } from '../src/index.js';
import { describeBusContract } from './bus-contract-suite.js';

// One in-memory broker for the file; each "replica" is a connection to it, as services are when embedded.
const broker = new InMemoryBus();

describeBusContract('InMemoryBus', {
  create: async () => broker.connection(),
  dispose: () => broker.close(),
});
