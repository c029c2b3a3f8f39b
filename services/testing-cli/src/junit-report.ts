import type { Batch } from './batch-types.js';
import { firstViolation } from './batch-report.js';

/** XML text and attribute escaping; characters XML 1.0 cannot hold at all are dropped. */
export function escapeXml(text: string): string {
  return text
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

const attributes = (values: Record<string, string | number>): string =>
  Object.entries(values)
    .map(([name, value]) => ` ${name}="${escapeXml(String(value))}"`)
    .join('');

/**
 * The batch as JUnit XML (the Ant/Surefire shape CI systems read): `failed` is a <failure> listing
 * every violation, `error` and `timeout` an <error>, a disabled case <skipped/>.
 */
export function junitReport(batch: Batch): string {
  const classname = `weft.process.${batch.processId}`;
  const seconds = (ms: number | null) => ((ms ?? 0) / 1000).toFixed(3);
  const cases = batch.runs.map((run) => {
    const head = `    <testcase${attributes({ name: run.testCaseName, classname, time: seconds(run.durationMs) })}`;
    if (run.status === 'passed') return `${head}/>`;
    const details = (run.validationResults?.errors ?? []).map((error) => `${error.path} ${error.message}`).join('\n');
    const element = run.status === 'failed' ? 'failure' : 'error';
    const message = firstViolation(run) || run.status;
    const body = details || run.errorMessage || run.status;
    return `${head}>\n      <${element}${attributes({ message, type: run.status })}>${escapeXml(body)}</${element}>\n    </testcase>`;
  });
  const skipped = batch.skipped.map(
    (item) =>
      `    <testcase${attributes({ name: item.name, classname, time: '0.000' })}>\n      <skipped${attributes({ message: item.reason })}/>\n    </testcase>`,
  );
  const totalMs = batch.runs.reduce((sum, run) => sum + (run.durationMs ?? 0), 0);
  const suite = attributes({
    name: `weft process ${batch.processId}`,
    tests: batch.runs.length + batch.skipped.length,
    failures: batch.stats.failed,
    errors: batch.stats.error + batch.stats.timeout,
    skipped: batch.skipped.length,
    time: seconds(totalMs),
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites${attributes({ name: 'weft test', tests: batch.runs.length + batch.skipped.length })}>`,
    `  <testsuite${suite}>`,
    ...cases,
    ...skipped,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
