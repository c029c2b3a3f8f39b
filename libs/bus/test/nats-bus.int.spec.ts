import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { NatsBus, type Bus } from '../src/index.js';
import { describeBusContract } from './bus-contract-suite.js';

const servers = process.env.WEFT_TEST_NATS_URL ?? '';
// scripts/run-tests.sh sets it; without it the suite fails instead of reaching whatever listens on 4222.
if (!servers) throw new Error('WEFT_TEST_NATS_URL is not set (run the tests through scripts/run-tests.sh)');

describeBusContract('NatsBus', {
  create: (logger) => NatsBus.connect({ servers, name: 'bus-contract-test', logger }),
  crash: async (bus: Bus) => {
    // close() without drain: in-flight messages stay unacked, as when the process dies.
    await (bus as NatsBus).connection.close();
  },
  deleteStream: async (stream) => {
    const nc = await connect({ servers });
    try {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.delete(stream).catch(() => false);
    } finally {
      await nc.close();
    }
  },
});
