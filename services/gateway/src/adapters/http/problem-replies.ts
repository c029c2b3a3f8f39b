import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ProblemError, type Problem } from '@weft/contracts';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export function sendProblem(reply: FastifyReply, problem: Problem): FastifyReply {
  if (problem.status === 401) reply.header('www-authenticate', 'Bearer');
  return reply.code(problem.status).type(PROBLEM_CONTENT_TYPE).send(problem);
}

/** Fastify's own 4xx errors (body too large, bad JSON, unsupported media type) keep their status. */
const FASTIFY_DETAILS: Record<string, string> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'request body is larger than the limit',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported content type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'content-length does not match the body',
};

export function toProblem(error: unknown, request: FastifyRequest): Problem {
  if (error instanceof ProblemError) return error.problem;
  const fastifyError = error as Partial<FastifyError>;
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const detail = (fastifyError.code && FASTIFY_DETAILS[fastifyError.code]) ?? fastifyError.message ?? 'bad request';
    return new ProblemError(status, detail).problem;
  }
  request.log.error({ err: error }, 'unhandled error');
  return new ProblemError(500, 'internal error; see the server log with the request id', {
    requestId: request.id,
  }).problem;
}
