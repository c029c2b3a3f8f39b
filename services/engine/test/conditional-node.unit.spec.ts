import type { Condition } from '@weft/contracts';
import { chooseBranch, evaluateCondition } from '../src/domain/nodes/conditional-node.js';

describe('conditional node', () => {
  test.each<[Condition, boolean]>([
    [{ left: 5, operator: 'eq', right: '5' }, true],
    [{ left: 'a', operator: 'ne', right: 'b' }, true],
    [{ left: '10', operator: 'gt', right: 9 }, true],
    [{ left: 3, operator: 'gte', right: 3 }, true],
    [{ left: 2, operator: 'lt', right: 1 }, false],
    [{ left: 2, operator: 'lte', right: 2 }, true],
    [{ left: 'hello world', operator: 'contains', right: 'world' }, true],
    [{ left: ['a', 'b'], operator: 'contains', right: 'b' }, true],
    [{ left: 'hello', operator: 'notContains', right: 'x' }, true],
    [{ left: 'invoice-1', operator: 'startsWith', right: 'invoice' }, true],
    [{ left: 'file.pdf', operator: 'endsWith', right: '.pdf' }, true],
    [{ left: 'b', operator: 'in', right: ['a', 'b'] }, true],
    [{ left: null, operator: 'exists' }, false],
    [{ left: undefined, operator: 'notExists' }, true],
    [{ left: [], operator: 'isEmpty' }, true],
    [{ left: { a: 1 }, operator: 'isNotEmpty' }, true],
    [{ left: 'INV-2024-07', operator: 'matches', right: '^INV-\\d{4}-\\d{2}$' }, true],
  ])('%j is %s', (condition, expected) => {
    expect(evaluateCondition(condition)).toBe(expected);
  });

  test('and / or combinators', () => {
    const conditions: Condition[] = [
      { left: 1, operator: 'eq', right: 1 },
      { left: 1, operator: 'eq', right: 2 },
    ];
    expect(chooseBranch({ label: 'c', mode: 'conditions', combinator: 'and', conditions })).toBe('false');
    expect(chooseBranch({ label: 'c', mode: 'conditions', combinator: 'or', conditions })).toBe('true');
  });

  test('matches runs in linear time: a backtracking pattern cannot freeze the engine', () => {
    const evil = { left: `${'a'.repeat(50_000)}!`, operator: 'matches' as const, right: '^(a+)+$' };
    expect(evaluateCondition(evil)).toBe(false);
    expect(evaluateCondition({ left: 'abc123', operator: 'matches', right: '^[a-z]+\\d+$' })).toBe(true);
  });

  test('a pattern the linear engine cannot run is a node failure', () => {
    expect(() => evaluateCondition({ left: 'aa', operator: 'matches', right: '(a)\\1' })).toThrow(/linear time/);
  });

  test('an invalid regular expression is a node failure', () => {
    expect(() => evaluateCondition({ left: 'x', operator: 'matches', right: '(' })).toThrow(
      /invalid regular expression/,
    );
  });
});
