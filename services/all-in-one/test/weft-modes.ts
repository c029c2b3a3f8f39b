import { loadConfig } from '@weft/config';
import { startWeft, type RunningWeft } from '../src/weft-runtime.js';
import { createTestDatabase, startNatsServer } from '@weft/test-support';
import { BOOTSTRAP_KEY, removeDir, startEmbedded, tempDataDir } from './weft-harness.js';

/**
 * The whole Weft in this test process, in either mode, for tests that reach inside it (its store,
 * replicas started and stopped in process); tests that need only HTTP use support/deployment.ts. Embedded: PGlite and the in-memory bus. Distributed:
 * the same composition over a nats-server of this suite's own (the standard stream and queue
 * names are then shared with nobody) and a fresh PostgreSQL database on WEFT_TEST_DATABASE_URL.
 */
export type WeftMode = 'embedded' | 'distributed';
export const WEFT_MODES: WeftMode[] = ['embedded', 'distributed'];

export interface WeftUnderTest {
  weft: RunningWeft;
  dataDir: string;
  /** The WEFT_* variables that reach this Weft's data: a command run beside it gets them. */
  env: Record<string, string>;
  /** Starts another Weft on the same database and bus (distributed) or data dir (embedded, after stopAll). */
  startReplica(env?: Record<string, string>): Promise<RunningWeft>;
  /** Stops every Weft started here, keeping the data (PGlite has one writer). */
  stopAll(): Promise<void>;
  dispose(): Promise<void>;
}

export async function startWeftIn(mode: WeftMode, env: Record<string, string> = {}): Promise<WeftUnderTest> {
  const dataDir = await tempDataDir();
  const base = { WEFT_BOOTSTRAP_API_KEY: BOOTSTRAP_KEY, ...env };
  if (mode === 'embedded') {
    const running: RunningWeft[] = [await startEmbedded(dataDir, base)];
    const stopAll = async () => {
      for (const weft of running.splice(0).reverse()) await weft.stop();
    };
    return {
      weft: running[0]!,
      dataDir,
      env: { ...base, WEFT_DATA_DIR: dataDir },
      async startReplica(more = {}) {
        const weft = await startEmbedded(dataDir, { ...base, ...more });
        running.push(weft);
        return weft;
      },
      stopAll,
      async dispose() {
        await stopAll();
        await removeDir(dataDir);
      },
    };
  }
  const nats = await startNatsServer();
  const database = await createTestDatabase('weft_e2e');
  const distributed = {
    ...base,
    WEFT_DATABASE_URL: database.url,
    WEFT_NATS_URL: nats.url,
    WEFT_SECRET_KEY: 'weft-e2e-secret-key-0123456789',
  };
  const replicas: RunningWeft[] = [];
  const stopAll = async () => {
    for (const replica of replicas.splice(0).reverse()) await replica.stop();
  };
  const start = async (more: Record<string, string> = {}) => {
    const replica = await startWeft(
      loadConfig({ WEFT_PORT: '0', WEFT_HOST: '127.0.0.1', WEFT_DATA_DIR: dataDir, ...distributed, ...more }),
    );
    replicas.push(replica);
    return replica;
  };
  try {
    const weft = await start();
    return {
      weft,
      dataDir,
      env: { ...distributed, WEFT_DATA_DIR: dataDir },
      startReplica: start,
      stopAll,
      async dispose() {
        await stopAll().catch(() => undefined);
        await nats.stop();
        await database.drop();
        await removeDir(dataDir);
      },
    };
  } catch (error) {
    await nats.stop();
    await database.drop();
    throw error;
  }
}
