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
/** Pause after a failed pull before the next one. */
const PULL_RETRY_MS = 1_000;
/**
 * How long a message that arrived when every gate slot was taken waits for one here before it goes
 * back to the stream for another replica. A pull asks for messages while slots are free, but a
 * slot may be taken by other work (a synchronous run started directly) before the message comes:
 * holding it until this replica frees up would leave it waiting while another replica is idle.
 */
const SLOT_WAIT_BEFORE_RETURN_MS = 250;

/**
 * Pulls only as many messages as there are free handler and gate slots: while the gate is closed
 * nothing is pulled, so requests wait in the stream (where another replica may take them) instead
 * of in this process. The gate slot is taken when the message arrives, not during the pull, so an
 * idle pull never keeps a slot from others (resumed executions, runs started directly); if one
 * took it meanwhile, the message waits briefly and then goes back (nak) to whichever replica pulls
 * next. A returned message counts one more delivery on the server.
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

  /** A gate slot for a message in hand; undefined (the message goes back) when none frees soon. */
  const gateSlotFor = async (): Promise<(() => void) | undefined> => {
    const giveUpAt = Date.now() + SLOT_WAIT_BEFORE_RETURN_MS;
    for (;;) {
      if (stopping) return undefined;
      const release = options.gate.tryTake();
      if (release) return release;
      const left = giveUpAt - Date.now();
      if (left <= 0) return undefined;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        options.gate.whenFree(),
        stopped,
        new Promise<void>((resolve) => (timer = setTimeout(resolve, left))),
      ]);
      clearTimeout(timer);
    }
  };

  /** One pull: as many messages as there are free slots, each handed to a handler. */
  const pullOnce = async (): Promise<void> => {
    const wanted = Math.max(1, Math.min(options.concurrency - inFlight.size, options.gate.free()));
    pull = await consumer.fetch({ max_messages: wanted, expires: PULL_EXPIRES_MS });
    // Stopped while the pull was being set up: end it now rather than when it expires.
    if (stopping) await pull.close().catch(() => undefined);
    for await (const msg of pull) {
      const release = await gateSlotFor();
      if (!release) {
        msg.nak();
        continue;
      }
      void inFlight.track(options.handle(msg)).finally(() => {
        release();
        handlerSlots.shift()?.();
      });
    }
  };

  const loop = (async () => {
    while (!stopping) {
      await Promise.race([freeHandler(), stopped]);
      await Promise.race([options.gate.whenFree(), stopped]);
      if (stopping) break;
      try {
        await pullOnce();
      } catch (error) {
        // A pull that fails (the server busy or restarting, missed heartbeats, the consumer gone
        // for a moment) must not end the loop: this replica would never take work again while the
        // others fill up. Messages it held go back after ack_wait.
        if (stopping) break;
        options.logger.warn({ err: error, durable: options.durable }, 'pull failed; pulling again');
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([stopped, new Promise<void>((resolve) => (timer = setTimeout(resolve, PULL_RETRY_MS)))]);
        clearTimeout(timer);
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
