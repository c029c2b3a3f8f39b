import type { Batch, BatchRun } from './batch-types.js';

/** What the CLI prints: a line per finished case, then a table and the pass rate. */
const seconds = (run: BatchRun): string => `${((run.durationMs ?? 0) / 1000).toFixed(2)}s`;

/** The first reason a run did not pass: its first violation, else its error message. */
export function firstViolation(run: BatchRun): string {
  const violation = run.validationResults?.errors[0];
  if (violation) return `${violation.path} ${violation.message}`;
  return run.status === 'passed' ? '' : (run.errorMessage ?? '');
}

export function progressLine(run: BatchRun, index: number, total: number): string {
  const reason = firstViolation(run);
  return `[${index}/${total}] ${run.status.padEnd(7)} ${run.testCaseName} (${seconds(run)})${reason ? ` - ${reason}` : ''}`;
}

export const skippedLine = (skipped: Batch['skipped'][number]): string => `skipped ${skipped.name} (${skipped.reason})`;

export function summaryTable(batch: Batch): string {
  const rows = [
    ['Case', 'Status', 'Duration', 'First violation'],
    ...batch.runs.map((run) => [run.testCaseName, run.status, seconds(run), firstViolation(run)]),
    ...batch.skipped.map((skipped) => [skipped.name, 'skipped', '', skipped.reason]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  const line = (row: string[]) =>
    row
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join('  ')
      .trimEnd();
  return [line(rows[0]!), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.slice(1).map(line)].join('\n');
}

export function passRateLine(batch: Batch): string {
  const { stats } = batch;
  return (
    `pass rate ${(stats.passRate * 100).toFixed(1)}% (${stats.passed}/${stats.total} passed, ${stats.failed} failed, ` +
    `${stats.error} error, ${stats.timeout} timeout, ${batch.skipped.length} skipped)`
  );
}

/** Some case ran and every one passed (skipped cases do not count); none running fails, so a mistyped tag cannot pass CI. */
export const allPassed = (batch: Batch): boolean =>
  batch.runs.length > 0 && batch.runs.every((run) => run.status === 'passed');
