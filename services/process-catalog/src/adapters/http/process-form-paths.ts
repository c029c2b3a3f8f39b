import { ProblemError } from '@weft/contracts';

const SNAKE: Record<string, string> = {
  sourceNodeId: 'source_node_id',
  targetNodeId: 'target_node_id',
  sourceHandle: 'source_handle',
  targetHandle: 'target_handle',
  maxRetries: 'max_retries',
  errorWebhookUrl: 'error_webhook_url',
  timeoutSeconds: 'timeout_seconds',
};

/** The decider names fields in camelCase; process-form requests name them in snake_case. */
export async function withProcessFormPaths<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof ProblemError) || !error.problem.errors) throw error;
    const errors = error.problem.errors.map((violation) => ({
      ...violation,
      path: violation.path
        .split('/')
        .map((segment) => SNAKE[segment] ?? segment)
        .join('/'),
    }));
    const { status, detail, ...rest } = error.problem;
    // The detail repeats the violations' paths; it must name the same fields as `errors`.
    const snakeDetail = detail?.replace(/\/([A-Za-z]+)/g, (whole: string, segment: string) =>
      SNAKE[segment] ? `/${SNAKE[segment]}` : whole,
    );
    throw new ProblemError(status, snakeDetail, { ...rest, errors });
  }
}
