import { conflict, notFound } from '@weft/contracts';
import type { TestCaseEvent, TestCaseFields } from './test-case-events.js';
import type { TestCaseState } from './test-case-state.js';

export type TestCaseCommand =
  | {
      type: 'CreateTestCase';
      fields: TestCaseFields;
      processId: string;
      organizationId: string;
      actor: { userId: string; userName: string };
      now: string;
    }
  | { type: 'ChangeTestCase'; fields: TestCaseFields; now: string }
  | { type: 'DeleteTestCase'; now: string };

/** Pure: the events a command produces on a test case, or a problem. Inputs are validated before. */
export function decideTestCase(command: TestCaseCommand, state: TestCaseState): TestCaseEvent[] {
  switch (command.type) {
    case 'CreateTestCase':
      if (state.exists) throw conflict('the test case already exists');
      return [
        {
          type: 'TestCaseCreated',
          data: {
            ...command.fields,
            processId: command.processId,
            organizationId: command.organizationId,
            createdBy: command.actor.userName,
            createdById: command.actor.userId,
            createdAt: command.now,
          },
        },
      ];
    case 'ChangeTestCase':
      if (!state.exists || state.deleted) throw notFound('test case not found');
      return [{ type: 'TestCaseChanged', data: { ...command.fields, changedAt: command.now } }];
    case 'DeleteTestCase':
      if (!state.exists || state.deleted) throw notFound('test case not found');
      return [{ type: 'TestCaseDeleted', data: { deletedAt: command.now } }];
    default: {
      const unknown: never = command;
      return unknown;
    }
  }
}
