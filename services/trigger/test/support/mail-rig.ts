import { randomUUID } from 'node:crypto';
import { openTestStore, type TestStore } from '../../../../libs/event-store/test/support/test-database.js';
import {
  gmailListenerFactory,
  outlookListenerFactory,
  type MailListenerOptions,
} from '../../src/adapters/mail/index.js';
import type { ListenerContext, TriggerListener } from '../../src/application/listener-port.js';
import { MailTestClock } from './mail-clock.js';
import { startLocalProviders, type LocalProviders, type ProviderName } from './mail-providers.js';
import { MailTestWorld, replicaContext, type Replica } from './mail-test-context.js';

/** The mail tests' start time (the clock is injected, so every test sees the same instants). */
export const T0 = Date.UTC(2026, 10, 23, 9, 0, 0);

const factories = { gmail: gmailListenerFactory, outlook: outlookListenerFactory };

export interface ListenerSetup {
  options?: Partial<MailListenerOptions>;
  processId?: string;
  /** Replaces the replica's `fire` (to crash it between its claim and its start). */
  fire?: ListenerContext['fire'];
}

/**
 * What a mail listener test stands on: one PGlite store for the file (each test's process id names
 * its own mailbox stream) and, per test, a fresh clock, local Gmail/Graph servers and world.
 */
export class MailRig {
  testStore!: TestStore;
  clock!: MailTestClock;
  providers!: LocalProviders;
  world!: MailTestWorld;

  /** Registers the jest hooks that open and close the rig; `eachTest` runs after each test's setup. */
  static use(eachTest?: (rig: MailRig) => void): MailRig {
    const rig = new MailRig();
    beforeAll(async () => {
      rig.testStore = await openTestStore('pglite');
    });
    afterAll(() => rig.testStore.dispose());
    beforeEach(async () => {
      rig.clock = new MailTestClock(T0);
      rig.providers = await startLocalProviders(rig.clock);
      rig.world = new MailTestWorld();
      eachTest?.(rig);
    });
    afterEach(() => rig.providers.close());
    return rig;
  }

  /** A `provider` listener on a new replica of input node `in` (not started). */
  listener(
    provider: ProviderName,
    config: Record<string, unknown>,
    setup: ListenerSetup = {},
  ): { replica: Replica; listener: TriggerListener } {
    const replica = replicaContext({
      world: this.world,
      store: this.testStore.store,
      clock: this.clock,
      processId: setup.processId ?? randomUUID(),
      nodeId: 'in',
      config,
      fire: setup.fire,
    });
    return { replica, listener: factories[provider](this.providers.options(setup.options))(replica.context) };
  }

  /** A started listener, once it waits for its next poll. */
  async listen(
    provider: ProviderName,
    config: Record<string, unknown>,
    setup: ListenerSetup = {},
  ): Promise<{ replica: Replica; listener: TriggerListener }> {
    const made = this.listener(provider, config, setup);
    await made.listener.start();
    await this.clock.parked(1);
    return made;
  }

  /** Wakes the listeners for their next poll; answers the wait the last one chose after it. */
  async pollOnce(): Promise<number> {
    this.clock.advanceToNextWake();
    await this.clock.parked(1);
    return this.clock.waits.at(-1)!;
  }
}
