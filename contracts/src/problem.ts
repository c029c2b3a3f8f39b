/** RFC 9457 problem details: the one error shape of HTTP answers and bus replies. */
export interface ProblemViolation {
  /** JSON pointer of the offending value, e.g. `/nodes/0/type`. */
  path: string;
  message: string;
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail?: string;
  errors?: ProblemViolation[];
  [extension: string]: unknown;
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  423: 'Locked',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/**
 * Thrown by any handler to answer with a problem; travels over the bus unchanged,
 * so the gateway can turn a service's refusal into the right HTTP status.
 */
export class ProblemError extends Error {
  readonly problem: Problem;

  constructor(status: number, detail?: string, extra: Partial<Problem> = {}) {
    const title = extra.title ?? TITLES[status] ?? 'Error';
    super(detail ?? title);
    this.name = 'ProblemError';
    this.problem = {
      type: extra.type ?? `https://weft.dev/problems/${status}`,
      title,
      status,
      ...(detail === undefined ? {} : { detail }),
      ...extra,
    };
  }

  get status(): number {
    return this.problem.status;
  }

  static fromProblem(problem: Problem): ProblemError {
    const { status, detail, ...rest } = problem;
    return new ProblemError(status, detail, rest);
  }
}

export const badRequest = (detail: string, errors?: ProblemViolation[]): ProblemError =>
  new ProblemError(400, detail, errors ? { errors } : {});
export const notFound = (detail: string): ProblemError => new ProblemError(404, detail);
export const conflict = (detail: string, extra: Partial<Problem> = {}): ProblemError =>
  new ProblemError(409, detail, extra);
export const forbidden = (detail: string): ProblemError => new ProblemError(403, detail);
export const locked = (detail: string): ProblemError => new ProblemError(423, detail);
