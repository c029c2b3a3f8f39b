import { InMemoryBus } from '../src/index.js';
import { describeBusContract } from './bus-contract-suite.js';

// One in-memory broker for the file; each "replica" is a connection to it, as services are when embedded.
let broker: InMemoryBus | undefined;

describeBusContract('InMemoryBus', {
  create: async (logger) => (broker ??= new InMemoryBus({ logger })).connection(),
  dispose: async () => broker?.close(),
});
