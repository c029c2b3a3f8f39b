import { conflict } from '@weft/contracts';
import type { EventMetadata, EventStore } from '@weft/event-store';
import { foldStream, WrongExpectedVersionError } from '@weft/event-store';
import { decideTestCase, type TestCaseCommand } from '../domain/test-case/test-case-decide.js';
import { testCaseStream, TEST_CASE_EVENT_TYPES, type TestCaseEvent } from '../domain/test-case/test-case-events.js';
import { evolveTestCase, initialTestCaseState } from '../domain/test-case/test-case-state.js';

/** load -> decide -> append with the version read, so concurrent edits of one case conflict (409). */
export async function handleTestCaseCommand(
  store: EventStore,
  testCaseId: string,
  command: TestCaseCommand,
  metadata: EventMetadata,
): Promise<void> {
  const { state, expectedVersion } = await foldStream<ReturnType<typeof initialTestCaseState>, TestCaseEvent>(
    store,
    testCaseStream(testCaseId),
    { initial: initialTestCaseState(), evolve: evolveTestCase, eventTypes: TEST_CASE_EVENT_TYPES },
  );
  const events = decideTestCase(command, state);
  try {
    await store.append(
      testCaseStream(testCaseId),
      events.map((event) => ({ ...event, metadata })),
      { expectedVersion },
    );
  } catch (error) {
    if (error instanceof WrongExpectedVersionError) throw conflict('the test case was changed meanwhile; retry');
    throw error;
  }
}
