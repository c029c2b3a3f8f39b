import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import type { EngineHarness } from './engine-harness.js';

/** Starts engine-child.ts in its own process (to be SIGKILLed); resolves once it takes work. */
export async function spawnEngineChild(options: {
  schema: string;
  queue: EngineHarness['queue'];
  leaseMs: number;
  env?: Record<string, string>;
}): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      '--conditions=weft-source',
      '--no-warnings',
      '--import',
      resolve(__dirname, 'ts-hooks.mjs'),
      resolve(__dirname, 'engine-child.ts'),
    ],
    {
      env: {
        ...process.env,
        NODE_OPTIONS: '',
        CHILD_SCHEMA: options.schema,
        CHILD_LEASE_MS: String(options.leaseMs),
        CHILD_QUEUE_STREAM: options.queue.spec.stream,
        CHILD_QUEUE_SUBJECT: options.queue.spec.subject,
        CHILD_QUEUE_DURABLE: options.queue.durable,
        ...options.env,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  await new Promise<void>((ready, failed) => {
    child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && ready());
    child.once('exit', (code) => failed(new Error(`engine child exited with ${code}`)));
  });
  return child;
}

/** SIGKILL, and resolves once the process is gone. */
export async function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGKILL');
  await exited;
}
