import { judgeExecution } from '../src/domain/validation/test-outcome.js';
import { wildcardMatches } from '../src/domain/validation/expected-files.js';
import { ignoreFieldProblem } from '../src/domain/validation/ignore-fields.js';

/** The judging of a finished execution: exact JSONPaths, ignoreFields, expected files. */
describe('judging a test run', () => {
  const schema = {
    type: 'object',
    required: ['Out'],
    properties: {
      Out: {
        type: 'object',
        required: ['total', 'invoice'],
        properties: {
          total: { type: 'number', minimum: 0 },
          invoice: {
            type: 'object',
            properties: {
              lines: {
                type: 'array',
                items: { type: 'object', properties: { amount: { type: 'number', minimum: 0 } } },
              },
            },
          },
          'odd key': { type: 'string' },
        },
      },
    },
  };
  const expectations = { expectedOutputSchema: schema, expectedFiles: null, ignoreFields: [] as string[] };
  const limits = { maxViolations: 1000 };

  it('names each violation by its exact JSONPath', () => {
    const output = {
      Out: { total: -1, invoice: { lines: [{ amount: 1 }, { amount: 2 }, { amount: -3 }] }, 'odd key': 5 },
    };
    const outcome = judgeExecution({ status: 'completed', output, errorMessage: null }, expectations, limits);
    expect(outcome.status).toBe('failed');
    expect(outcome.validationResults?.valid).toBe(false);
    expect(outcome.validationResults?.errors.map((error) => error.path).sort()).toEqual(
      ['$.Out.invoice.lines[2].amount', '$.Out.total', "$.Out['odd key']"].sort(),
    );
    expect(outcome.schemaErrors).toContain('$.Out.total must be >= 0');
    expect(outcome.actualOutput).toEqual(output);
  });

  it('reports a missing property at its own path', () => {
    const outcome = judgeExecution(
      { status: 'completed', output: { Out: { invoice: {} } }, errorMessage: null },
      expectations,
      limits,
    );
    expect(outcome.validationResults?.errors).toEqual([
      { field: 'Out.total', message: 'is required', path: '$.Out.total' },
    ]);
  });

  it('keys that look like indices stay keys', () => {
    const outcome = judgeExecution(
      { status: 'completed', output: { '0': 'x' }, errorMessage: null },
      { ...expectations, expectedOutputSchema: { type: 'object', properties: { '0': { type: 'number' } } } },
      limits,
    );
    expect(outcome.validationResults?.errors[0]?.path).toBe("$['0']");
  });

  it('removes ignoreFields before validating, and keeps them in actualOutput', () => {
    const output = { Out: { total: -1, invoice: { lines: [{ amount: -1 }, { amount: -2 }] } } };
    const outcome = judgeExecution(
      { status: 'completed', output, errorMessage: null },
      { ...expectations, ignoreFields: ['$.Out.total', '$.Out.invoice.lines[*]'] },
      limits,
    );
    expect(outcome.validationResults).toEqual({ valid: true, errors: [] });
    expect(outcome.status).toBe('passed');
    expect(outcome.actualOutput).toEqual(output);
  });

  it('maps failed, cancelled, timed-out and still-running executions', () => {
    const judge = (status: 'failed' | 'cancelled' | 'timeout' | 'running') =>
      judgeExecution({ status, output: null, errorMessage: 'boom' }, expectations, limits).status;
    expect([judge('failed'), judge('cancelled'), judge('timeout'), judge('running')]).toEqual([
      'error',
      'error',
      'timeout',
      'timeout',
    ]);
  });

  it('matches expected files by pattern and minimum size, each file once', () => {
    const report = { name: 'report-2026.pdf', url: 's3://b/1', size: 2048 };
    const small = { name: 'summary.pdf', url: 's3://b/2', size: 10 };
    const output = { Out: { files: [report, small] } };
    const passed = judgeExecution(
      { status: 'completed', output, errorMessage: null },
      {
        expectedOutputSchema: {},
        ignoreFields: [],
        expectedFiles: { count: 2, files: [{ namePattern: 'report-*.pdf', minSize: 1000 }, { namePattern: '*.pdf' }] },
      },
      limits,
    );
    expect(passed.status).toBe('passed');
    expect(passed.fileComparisonResults?.files.map((file) => file.actualFile?.name)).toEqual([
      'report-2026.pdf',
      'summary.pdf',
    ]);
    const failed = judgeExecution(
      { status: 'completed', output, errorMessage: null },
      {
        expectedOutputSchema: {},
        ignoreFields: [],
        expectedFiles: { count: 3, files: [{ namePattern: 'summary.pdf', minSize: 100 }, { namePattern: '*.csv' }] },
      },
      limits,
    );
    expect(failed.status).toBe('failed');
    expect(failed.validationResults?.errors).toEqual([
      { field: 'files', message: 'expected 3 files, found 2', path: '$' },
      { field: 'files[0]', message: 'summary.pdf is 10 bytes, below the minimum of 100', path: '$.Out.files[1].size' },
      { field: 'files[1]', message: 'no file matches *.csv', path: '$' },
    ]);
    expect(failed.fileComparisonResults?.files.map((file) => file.matched)).toEqual([false, false]);
  });

  it('wildcards: * any run, ? one character, the rest literal', () => {
    expect(wildcardMatches('a?c.*', 'abc.txt')).toBe(true);
    expect(wildcardMatches('a.c', 'abc')).toBe(false);
    expect(wildcardMatches('*.pdf', 'x.pdf.exe')).toBe(false);
    expect(wildcardMatches('*', '')).toBe(true);
    expect(wildcardMatches('in*-*.csv', 'invoice-2026-11.csv')).toBe(true);
    expect(wildcardMatches('??', 'a')).toBe(false);
    expect(wildcardMatches('a*b*c', 'aXbYbZc')).toBe(true);
  });

  it('wildcards match in linear time: a pattern that backtracks exponentially as a regex answers at once', () => {
    // As a backtracking regex this call ran for minutes and blocked the event loop (the test never ended).
    expect(wildcardMatches('*a*a*a*a*a*a*a*a*a*a*a*ab', 'a'.repeat(40))).toBe(false);
  });

  it('refuses ignoreFields that are not JSONPaths or would run a script filter', () => {
    expect(ignoreFieldProblem('Out.total')).toMatch(/starting with \$/);
    expect(ignoreFieldProblem('$..[?(@.x==1)]')).toMatch(/not a usable JSONPath/);
    expect(ignoreFieldProblem('$.Out.total')).toBeUndefined();
  });

  it('keeps at most maxViolations violations and counts the rest', () => {
    const outcome = judgeExecution(
      { status: 'completed', output: [1, 2, 3, 4, 5], errorMessage: null },
      { expectedOutputSchema: { items: { type: 'string' } }, expectedFiles: null, ignoreFields: [] },
      { maxViolations: 2 },
    );
    expect(outcome.validationResults).toEqual({
      valid: false,
      errors: [
        { field: '[0]', message: 'must be string', path: '$[0]' },
        { field: '[1]', message: 'must be string', path: '$[1]' },
      ],
      omittedErrors: 3,
    });
    expect(outcome.schemaErrors).toEqual(['$[0] must be string', '$[1] must be string']);
  });
});
