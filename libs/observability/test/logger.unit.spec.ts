import { Writable } from 'node:stream';
import { createInMemorySpanExporter, createLogger, initTelemetry, withSpan, type Telemetry } from '../src/index.js';

/** Collects the JSON lines a logger writes. */
const captureLines = () => {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, destination };
};

describe('createLogger', () => {
  let telemetry: Telemetry;
  beforeAll(() => {
    telemetry = initTelemetry('logger-test', { spanExporter: createInMemorySpanExporter() });
  });
  afterAll(() => telemetry.shutdown());

  it('adds trace_id and span_id while a span is active, and not outside one', async () => {
    const { lines, destination } = captureLines();
    const logger = createLogger('test', { destination });
    logger.info('outside');
    const ids = await withSpan('work', {}, (span) => {
      logger.info('inside');
      return span.spanContext();
    });
    expect(lines[0]).not.toHaveProperty('trace_id');
    expect(lines[1]).toMatchObject({ msg: 'inside', name: 'test', trace_id: ids.traceId, span_id: ids.spanId });
  });

  it("redacts a failed statement's parameters (user data), also as an error's cause", () => {
    const { lines, destination } = captureLines();
    const logger = createLogger('test', { destination });
    const statementError = Object.assign(new Error('refused'), { params: ['user data'], query: 'INSERT ...' });
    logger.error({ err: Object.assign(new Error('wrapped', { cause: statementError }), { code: '22P05' }) }, 'a');
    logger.error({ err: statementError }, 'b');
    expect(JSON.stringify(lines)).not.toContain('user data');
    expect(lines[1]).toMatchObject({ err: { params: '[redacted]', query: 'INSERT ...' } });
  });

  it('redacts secrets at the top level and nested', () => {
    const { lines, destination } = captureLines();
    const logger = createLogger('test', { destination });
    logger.info(
      {
        password: 'p1',
        apiKey: 'k1',
        headers: { authorization: 'Bearer t', 'x-api-key': 'wk_1', accept: 'json' },
        connection: { config: { secret: 's1', token: 't1', host: 'db' } },
      },
      'call',
    );
    const text = JSON.stringify(lines[0]);
    for (const secret of ['p1', 'k1', 'Bearer t', 'wk_1', 's1', 't1']) expect(text).not.toContain(`"${secret}"`);
    expect(lines[0]).toMatchObject({ headers: { accept: 'json' }, connection: { config: { host: 'db' } } });
    expect(lines[0]).toMatchObject({ password: '[redacted]', headers: { 'x-api-key': '[redacted]' } });
  });

  it('takes its level from WEFT_LOG_LEVEL', () => {
    const previous = process.env.WEFT_LOG_LEVEL;
    process.env.WEFT_LOG_LEVEL = 'warn';
    try {
      const { lines, destination } = captureLines();
      const logger = createLogger('test', { destination });
      logger.info('dropped');
      logger.warn('kept');
      expect(lines.map((line) => line.msg)).toEqual(['kept']);
    } finally {
      if (previous === undefined) delete process.env.WEFT_LOG_LEVEL;
      else process.env.WEFT_LOG_LEVEL = previous;
    }
  });
});
