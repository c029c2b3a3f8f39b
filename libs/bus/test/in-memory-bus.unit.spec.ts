import { InMemoryBus } from '../src/index.js';
import { describeBusContract } from './bus-contract-suite.js';

describeBusContract('InMemoryBus', { create: async () => new InMemoryBus() });
