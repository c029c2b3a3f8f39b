import { InMemoryBus } from '../src/index.js';
import { describeBusContract } from './bus-contract-suite.js';

// One in-memory broker per size limit; each "replica" is a connection to it, as services are when embedded.
const brokers = new Map<number | undefined, InMemoryBus>();

describeBusContract('InMemoryBus', {
  create: async (logger, options = {}) => {
    const { maxMessageBytes } = options;
    let broker = brokers.get(maxMessageBytes);
    if (!broker) brokers.set(maxMessageBytes, (broker = new InMemoryBus({ logger, maxMessageBytes })));
    return broker.connection();
  },
  dispose: async () => {
    await Promise.all([...brokers.values()].map((broker) => broker.close()));
    brokers.clear();
  },
});
