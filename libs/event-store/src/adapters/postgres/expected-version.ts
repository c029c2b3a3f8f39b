import { WrongExpectedVersionError, type ExpectedVersion } from '../../event-store.js';

/** Throws unless a stream at version `actual` (0 = no stream) satisfies `expected`. */
export function checkExpectedVersion(streamId: string, expected: ExpectedVersion | undefined, actual: number): void {
  if (expected === undefined || expected === 'any') return;
  const ok = expected === 'no_stream' ? actual === 0 : expected === 'stream_exists' ? actual > 0 : actual === expected;
  if (!ok) throw new WrongExpectedVersionError(streamId, expected, actual);
}
