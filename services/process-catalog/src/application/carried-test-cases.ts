import { ProblemError, type ExportedTestCase } from '@weft/contracts';
import type { CatalogApplication } from './catalog-application.js';
import type { Caller } from './caller.js';

/** The bus's answer when no service subscribes to a subject (no testing service deployed, or it is down). */
const isNoResponders = (error: unknown): boolean =>
  error instanceof ProblemError && error.status === 503 && /^No service answers /.test(error.message);

const NIL_PROCESS = '00000000-0000-0000-0000-000000000000';

/**
 * A process's test cases for its export, or undefined when no testing service answers: the
 * document then has no `testCases` at all (absent, not empty), and export and fork still work.
 */
export async function testCasesOf(
  app: CatalogApplication,
  processId: string,
  organizationId: string,
): Promise<ExportedTestCase[] | undefined> {
  if (!app.testCases) return undefined;
  try {
    return await app.testCases.exportCases(processId, organizationId);
  } catch (error) {
    if (isNoResponders(error)) return undefined;
    throw error;
  }
}

/** Refuses (503, before anything is stored) an import carrying test cases when no testing service answers. */
export async function assertTestCasesCanArrive(app: CatalogApplication, testCases: ExportedTestCase[]): Promise<void> {
  if (!app.testCases || testCases.length === 0) return;
  try {
    await app.testCases.exportCases(NIL_PROCESS, NIL_PROCESS);
  } catch (error) {
    if (!isNoResponders(error)) throw error;
    throw new ProblemError(
      503,
      'the testing service does not answer, so the test cases cannot be stored; nothing was imported',
    );
  }
}

/** Hands the new process's test cases to the testing service (idempotent per process, so a retry adds none twice). */
export async function carryTestCases(
  app: CatalogApplication,
  processId: string,
  organizationId: string,
  testCases: ExportedTestCase[],
  caller: Caller,
): Promise<void> {
  if (!app.testCases || testCases.length === 0) return;
  try {
    await app.testCases.importCases({
      requestId: processId,
      processId,
      organizationId,
      actor: { userId: caller.actor.userId, userName: caller.actor.userName },
      testCases,
    });
  } catch (error) {
    const reason = error instanceof ProblemError ? (error.problem.detail ?? error.message) : String(error);
    throw new ProblemError(503, `process ${processId} was created, but its test cases were not stored: ${reason}`, {
      processId,
    });
  }
}
