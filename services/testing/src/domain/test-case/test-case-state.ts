import type { TestCaseEvent, TestCaseFields } from './test-case-events.js';

export type TestCaseState =
  | { exists: false }
  | (TestCaseFields & {
      exists: true;
      deleted: boolean;
      processId: string;
      organizationId: string;
      createdBy: string;
      createdById: string;
      createdAt: string;
      updatedAt: string;
    });

export const initialTestCaseState = (): TestCaseState => ({ exists: false });

export function evolveTestCase(state: TestCaseState, event: TestCaseEvent): TestCaseState {
  switch (event.type) {
    case 'TestCaseCreated': {
      const { createdAt, ...rest } = event.data;
      return { ...rest, createdAt, updatedAt: createdAt, exists: true, deleted: false };
    }
    case 'TestCaseChanged': {
      if (!state.exists) return state;
      const { changedAt, ...fields } = event.data;
      return { ...state, ...fields, updatedAt: changedAt };
    }
    case 'TestCaseDeleted':
      return state.exists ? { ...state, deleted: true, updatedAt: event.data.deletedAt } : state;
    default: {
      const unknown: never = event;
      return unknown;
    }
  }
}
