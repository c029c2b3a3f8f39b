import { jetstreamManager } from '@nats-io/jetstream';
import { workQueue, type ExecutionRequest } from '@weft/contracts';
import { NatsBus } from '@weft/bus';
import { openDatabase } from '@weft/event-store';
import { sql } from 'kysely';
import type { EngineHarness } from './engine-harness.js';
import { testDatabaseUrl, testNatsUrl } from './test-services.js';

/** A schema and work queue of the test's own, shared by an engine child it kills and the engine that survives it. */
export interface SharedEngineQueue {
  schema: string;
  queue: EngineHarness['queue'];
  /** Deletes the queue's stream and drops the schema. */
  dispose(): Promise<void>;
}

export function sharedEngineQueue(tag: string): SharedEngineQueue {
  const id = crypto.randomUUID().replace(/-/g, '').slice(0, 12);
  const schema = `test_engine_${tag}_${id}`;
  const queue = {
    spec: workQueue<ExecutionRequest>(
      `TEST_ENGINE_${tag.toUpperCase()}_${id}`,
      `test.engine.${tag}.${id}.executions`,
      ['engine'],
      'engine',
    ),
    durable: `engine_${tag}_${id}`,
  };
  return {
    schema,
    queue,
    async dispose() {
      const nats = await NatsBus.connect({ servers: testNatsUrl() });
      await (await jetstreamManager(nats.connection)).streams.delete(queue.spec.stream).catch(() => undefined);
      await nats.close();
      const owner = await openDatabase({ url: testDatabaseUrl() });
      await sql.raw(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).execute(owner.db);
      await owner.close();
    },
  };
}
