import type { ConsumerMessages, JetStreamClient, JsMsg } from '@nats-io/jetstream';
import type { Logger } from '@weft/observability';
import type { ConsumeGate, Subscription } from '../../bus.js';
import { InFlight } from '../../in-flight.js';

interface GatedPullLoopOptions {
  stream: string;
  durable: string;
  concurrency: number;
  gate: ConsumeGate;
  logger: Logger;
  /** Handles one message; acks, naks or terminates it itself. */
  handle: (msg: JsMsg) => Promise<void>;
}

/** How long one pull waits for a message on an empty queue before asking again. */
const PULL_EXPIRES_MS = 5_000;
/** How often a message waiting for a gate slot tells the server it is still being worked on. */
const WAITING_KEEPALIVE_MS = 10_000;

/**
 * Pulls only as many messages as there are free handler and gate slots: while the gate is closed
 * nothing is pulled, so requests wait in the stream (where another replica may
 * take them) instead of in this process. The gate slot is taken when the message arrives, not
 * during the pull, so an idle pull never keeps a slot from others (resumed executions); if one
 * took it meanwhile, the message waits here for the next free slot.
 */
export async function gatedPullLoop(js: JetStreamClient, options: GatedPullLoopOptions): Promise<Subscription> {
  const consumer = await js.consumers.get(options.stream, options.durable);
  const inFlight = new InFlight();
  let stopping = false;
  let wakeStop: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => (wakeStop = resolve));
  let pull: ConsumerMessages | undefined;
  const handlerSlots: Array<() => void> = [];
  const freeHandler = (): Promise<void> =>
    inFlight.size < options.concurrency ? Promise.resolve() : new Promise((resolve) => handlerSlots.push(resolve));

  /** A gate slot for a message in hand, keeping the message's lease while it waits. */
  const gateSlotFor = async (msg: JsMsg): Promise<(() => void) | undefined> => {
    const keepAlive = setInterval(() => {
      try {
        msg.working();
      } catch {
        // The connection is gone: the server redelivers after ack_wait.
      }
    }, WAITING_KEEPALIVE_MS);
    try {
      for (;;) {
        if (stopping) return undefined;
        const release = options.gate.tryTake();
        if (release) return release;
        await Promise.race([options.gate.whenFree(), stopped]);
      }
    } finally {
      clearInterval(keepAlive);
    }
  };

  const loop = (async () => {
    while (!stopping) {
      await Promise.race([freeHandler(), stopped]);
      await Promise.race([options.gate.whenFree(), stopped]);
      if (stopping) break;
      const wanted = Math.max(1, Math.min(options.concurrency - inFlight.size, options.gate.free()));
      pull = await consumer.fetch({ max_messages: wanted, expires: PULL_EXPIRES_MS });
      // Stopped while the pull was being set up: end it now rather than when it expires.
      if (stopping) await pull.close().catch(() => undefined);
      for await (const msg of pull) {
        const release = await gateSlotFor(msg);
        if (!release) {
          msg.nak();
          continue;
        }
        void inFlight.track(options.handle(msg)).finally(() => {
          release();
          handlerSlots.shift()?.();
        });
      }
    }
  })().catch((error: unknown) => options.logger.error({ err: error, durable: options.durable }, 'pull loop failed'));

  return {
    unsubscribe: async () => {
      stopping = true;
      wakeStop();
      await pull?.close().catch(() => undefined);
      await loop;
      await inFlight.settled();
    },
  };
}
