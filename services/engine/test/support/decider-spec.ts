import type { ExecutionCommand } from '../../src/domain/execution/commands.js';
import { decide } from '../../src/domain/execution/decide.js';
import type { ExecutionEvent } from '../../src/domain/execution/events.js';
import { foldExecution } from '../../src/domain/execution/state.js';

/** given([events]).when(command).then([events]) | .thenRefuses(status) for the execution decider. */
export const given = (events: ExecutionEvent[]) => ({
  when: (command: ExecutionCommand) => ({
    then: (expected: ExecutionEvent[]) => expect(decide(command, foldExecution(events))).toEqual(expected),
    thenRefuses: (status: number, detail?: RegExp) => {
      let error: unknown;
      try {
        decide(command, foldExecution(events));
      } catch (caught) {
        error = caught;
      }
      expect(error).toMatchObject({ problem: { status } });
      if (detail) expect((error as Error).message).toMatch(detail);
    },
  }),
});
