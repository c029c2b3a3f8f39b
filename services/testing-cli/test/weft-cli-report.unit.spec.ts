import type { Batch } from '../src/batch-types.js';
import { passRateLine, progressLine, summaryTable } from '../src/batch-report.js';
import { parseTestCommand, UsageError } from '../src/cli-args.js';
import { escapeXml, junitReport } from '../src/junit-report.js';

/** What `weft test` prints and writes, from a fixed batch. */
describe('weft test reports', () => {
  const run = (name: string, status: Batch['runs'][number]['status'], extra: Partial<Batch['runs'][number]> = {}) => ({
    id: `run-${name}`,
    testCaseId: `case-${name}`,
    testCaseName: name,
    status,
    durationMs: 1500,
    validationResults: status === 'failed' ? { valid: false, errors: [] } : { valid: true, errors: [] },
    errorMessage: null,
    ...extra,
  });
  const batch: Batch = {
    id: 'b1',
    processId: 'p1',
    status: 'completed',
    total: 3,
    done: 3,
    skipped: [{ testCaseId: 'case-off', name: 'off', reason: 'disabled' }],
    runs: [
      run('ok', 'passed'),
      run('total <0> & "quotes"', 'failed', {
        validationResults: {
          valid: false,
          errors: [
            { field: 'Out.total', message: 'must be >= 0', path: '$.Out.total' },
            { field: 'Out.x', message: 'is required', path: '$.Out.x' },
          ],
        },
      }),
      run('boom', 'error', { validationResults: null, errorMessage: 'script failed: boom' }),
    ],
    stats: { total: 3, passed: 1, failed: 1, error: 1, timeout: 0, passRate: 1 / 3, averageDuration: 1.5 },
  };

  it('a progress line names the case, its status, duration and first violation', () => {
    expect(progressLine(batch.runs[1]!, 2, 3)).toBe(
      '[2/3] failed  total <0> & "quotes" (1.50s) - $.Out.total must be >= 0',
    );
    expect(progressLine(batch.runs[0]!, 1, 3)).toBe('[1/3] passed  ok (1.50s)');
  });

  it('the summary table lists every case with its first violation, and the pass rate', () => {
    expect(summaryTable(batch).split('\n')).toEqual([
      'Case                  Status   Duration  First violation',
      '--------------------  -------  --------  ------------------------',
      'ok                    passed   1.50s',
      'total <0> & "quotes"  failed   1.50s     $.Out.total must be >= 0',
      'boom                  error    1.50s     script failed: boom',
      'off                   skipped            disabled',
    ]);
    expect(passRateLine(batch)).toBe('pass rate 33.3% (1/3 passed, 1 failed, 1 error, 0 timeout, 1 skipped)');
  });

  it('writes JUnit XML with failures, errors and skipped cases, escaped', () => {
    expect(junitReport(batch)).toBe(
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<testsuites name="weft test" tests="4">',
        '  <testsuite name="weft process p1" tests="4" failures="1" errors="1" skipped="1" time="4.500">',
        '    <testcase name="ok" classname="weft.process.p1" time="1.500"/>',
        '    <testcase name="total &lt;0&gt; &amp; &quot;quotes&quot;" classname="weft.process.p1" time="1.500">',
        '      <failure message="$.Out.total must be &gt;= 0" type="failed">$.Out.total must be &gt;= 0',
        '$.Out.x is required</failure>',
        '    </testcase>',
        '    <testcase name="boom" classname="weft.process.p1" time="1.500">',
        '      <error message="script failed: boom" type="error">script failed: boom</error>',
        '    </testcase>',
        '    <testcase name="off" classname="weft.process.p1" time="0.000">',
        '      <skipped message="disabled"/>',
        '    </testcase>',
        '  </testsuite>',
        '</testsuites>',
        '',
      ].join('\n'),
    );
  });

  it('drops characters XML cannot hold and escapes the five special ones', () => {
    expect(escapeXml('a\u0000b\u001bc<&>"\'\n')).toBe('abc&lt;&amp;&gt;&quot;&apos;\n');
  });

  it('reads its arguments; a missing process or key is a usage error', () => {
    expect(
      parseTestCommand(['test', '--process', 'p', '--tags', 'a, b', '--url', 'http://h:1/'], { WEFT_API_KEY: 'k' }),
    ).toEqual({
      processId: 'p',
      tags: ['a', 'b'],
      testCaseIds: [],
      url: 'http://h:1',
      key: 'k',
      junitFile: undefined,
      pollMs: 500,
    });
    expect(() => parseTestCommand(['test', '--key', 'k'], {})).toThrow(UsageError);
    expect(() => parseTestCommand(['test', '--process', 'p'], {})).toThrow(/API key/);
    expect(() => parseTestCommand(['test', '--process', 'p', '--nope'], { WEFT_API_KEY: 'k' })).toThrow(UsageError);
    expect(() => parseTestCommand(['deploy'], {})).toThrow(/unknown command/);
  });
});
