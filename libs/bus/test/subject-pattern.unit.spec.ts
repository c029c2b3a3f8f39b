import { subjectMatcher, subjectMatches } from '../src/index.js';

describe('subjectMatches (NATS wildcard rules for the in-memory bus)', () => {
  it.each([
    ['weft.events.>', 'weft.events.execution.org.p.Started', true],
    ['weft.events.>', 'weft.events', false],
    ['weft.events.execution.*.*.*', 'weft.events.execution.org.p.Started', true],
    ['weft.events.execution.*.*.*', 'weft.events.execution.org.p', false],
    ['weft.events.execution.org.*.*', 'weft.events.execution.other.p.Started', false],
    ['weft.a.b', 'weft.a.b', true],
    ['weft.a.b', 'weft.a.b.c', false],
    // A subscriber filter with wildcards is covered by a stream wildcard, not by a literal subject.
    ['weft.events.>', 'weft.events.execution.*.*', true],
    ['weft.events.execution.org.p.Started', 'weft.events.execution.*.p.Started', false],
    ['weft.events.*', 'weft.events.>', false],
    ['weft.events.process.>', 'weft.events.process.org.p.ProcessCreated', true],
    ['weft.events.process.>', 'weft.events.processes.org.p.ProcessCreated', false],
    ['weft.events.process.>', 'weft.events.process', false],
    ['weft.events.process.>', 'weft.events.process.', true],
    ['weft.*.process.>', 'weft.events.process.org', true],
    ['weft.*.process.>', 'weft.events.execution.org', false],
  ])('%s matches %s: %s', (pattern, subject, expected) => {
    expect(subjectMatches(pattern, subject)).toBe(expected);
    // The prepared matcher answers exactly as the function, whatever shortcut it takes.
    expect(subjectMatcher(pattern)(subject)).toBe(expected);
  });
});
