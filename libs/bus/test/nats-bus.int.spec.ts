import { NatsBus, type Bus } from '../src/index.js';
import { describeBusContract } from './bus-contract-suite.js';
import { startNatsWithMaxPayload, type NatsServerProcess } from './support/small-payload-nats.js';

// A server of the suite's own with a 64 KiB max_payload: every message of several MB travels in chunks.
let server: Promise<NatsServerProcess> | undefined;
const servers = async () => (await (server ??= startNatsWithMaxPayload())).url;

describeBusContract('NatsBus', {
  create: async (logger, options = {}) =>
    NatsBus.connect({ servers: await servers(), name: 'bus-contract-test', logger, ...options }),
  sharedQueues: true,
  crash: async (bus: Bus) => {
    // close() without drain: in-flight messages stay unacked, as when the process dies.
    await (bus as NatsBus).connection.close();
  },
  failNextReply: (bus: Bus) => {
    // The next publish throws, as it does when the connection breaks while the reply is sent
    // (a received message answers through the connection's protocol handler, not connection.publish).
    const protocol = (bus as NatsBus).connection as unknown as { protocol: { publish: (...args: unknown[]) => void } };
    const publish = protocol.protocol.publish;
    protocol.protocol.publish = () => {
      protocol.protocol.publish = publish;
      throw new Error('connection lost while replying (simulated)');
    };
  },
  dispose: async () => {
    await (await server)?.stop();
    server = undefined;
  },
});
