import { writeFile } from 'node:fs/promises';
import type { Batch } from './batch-types.js';
import { allPassed, passRateLine, progressLine, skippedLine, summaryTable } from './batch-report.js';
import type { TestCommandOptions } from './cli-args.js';
import { junitReport } from './junit-report.js';
import { WeftClient } from './weft-client.js';

export interface CommandIo {
  print(line: string): void;
  sleep(ms: number): Promise<void>;
}

/**
 * `weft test`: starts the batch without waiting, prints a line per case as it finishes, then the
 * table and pass rate, and writes the JUnit file. Returns the exit status (0 all passed, 1 not).
 */
export async function runTestCommand(options: TestCommandOptions, io: CommandIo): Promise<number> {
  const client = new WeftClient(options.url, options.key);
  let batch = await client.startBatch({
    processId: options.processId,
    ...(options.testCaseIds.length ? { testCaseIds: options.testCaseIds } : {}),
    ...(options.tags.length ? { tags: options.tags } : {}),
  });
  io.print(`batch ${batch.id}: ${batch.total} test cases to run, ${batch.skipped.length} skipped`);
  for (const skipped of batch.skipped) io.print(skippedLine(skipped));
  const reported = new Set<string>();
  for (;;) {
    reportFinished(batch, reported, io);
    if (batch.status === 'completed') break;
    await io.sleep(options.pollMs);
    batch = await client.readBatch(batch.id);
  }
  io.print('');
  io.print(summaryTable(batch));
  io.print('');
  io.print(passRateLine(batch));
  if (batch.runs.length === 0) io.print('no test case ran: check --process, --tags and --ids');
  if (options.junitFile) {
    await writeFile(options.junitFile, junitReport(batch));
    io.print(`JUnit report written to ${options.junitFile}`);
  }
  return allPassed(batch) ? 0 : 1;
}

function reportFinished(batch: Batch, reported: Set<string>, io: CommandIo): void {
  for (const run of batch.runs) {
    if (run.status === 'running' || reported.has(run.id)) continue;
    reported.add(run.id);
    io.print(progressLine(run, reported.size, batch.total));
  }
}
