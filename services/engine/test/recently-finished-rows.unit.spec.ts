import { RecentlyFinishedRows, type FinishedRows } from '../src/projections/recently-finished-rows.js';

const rowsOf = (id: string): FinishedRows => ({ execution: { id } as FinishedRows['execution'], nodes: [] });

describe('RecentlyFinishedRows', () => {
  test('hands each execution its rows once', () => {
    const finished = new RecentlyFinishedRows();
    finished.put('a', rowsOf('a'));
    expect(finished.take('a')?.execution.id).toBe('a');
    expect(finished.take('a')).toBeUndefined();
    expect(finished.take('never')).toBeUndefined();
  });

  test('keeps the newest entries when no one takes them', () => {
    const finished = new RecentlyFinishedRows(2);
    for (const id of ['a', 'b', 'c']) finished.put(id, rowsOf(id));
    expect(finished.take('a')).toBeUndefined();
    expect(finished.take('b')?.execution.id).toBe('b');
    expect(finished.take('c')?.execution.id).toBe('c');
  });
});
