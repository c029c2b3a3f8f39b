import { ProblemError, type Problem } from '@weft/contracts';
import type { Logger } from '@weft/observability';

/**
 * The problem a failed handler answers with: a ProblemError travels as is; anything else is
 * logged here and answered with a bare 500, so internals never reach the caller.
 */
export function problemFromError(error: unknown, logger: Logger, subject: string): Problem {
  if (error instanceof ProblemError) return error.problem;
  logger.error({ err: error, subject }, 'request handler failed');
  return new ProblemError(500, 'The request could not be completed.').problem;
}

export const isProblem = (value: unknown): value is Problem =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as Problem).status === 'number' &&
  typeof (value as Problem).title === 'string';
