import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import multipart from '@fastify/multipart';
import type { BlobStorage } from '@weft/blob-storage';
import { ProblemError, type HttpCall } from '@weft/contracts';
import type { FileReference } from '@weft/blob-storage';
import { extractTraceContext, withSpan } from '@weft/observability';
import { JsonText } from '@weft/bus';
import type { Authenticator } from '../../application/authenticator.js';
import { parseJsonBody } from './json-body.js';
import { sendProblem, toProblem } from './problem-replies.js';
import { authenticate, authorize, validateBody, validateUrlText } from './request-guards.js';
import { discardUploads, readUploads, type MultipartRequest } from './uploads.js';
import type { RouteBinding } from './route-binding.js';

export interface HttpServerOptions {
  bodyLimitBytes: number;
  authenticator: Authenticator;
  bindings: RouteBinding[];
  /** Ready only when the bus and the database answer. */
  readiness: () => Promise<Record<string, boolean>>;
  logger?: boolean | object;
  /** Where multipart uploads of routes that take them go (the webhook's files). */
  uploads: { blobs: BlobStorage; maxFiles: number; fileMaxBytes: number };
}

const FORWARDED_HEADERS = ['if-match', 'content-type', 'idempotency-key'] as const;

function toCall(request: FastifyRequest): HttpCall {
  const headers: Record<string, string | undefined> = {};
  for (const name of FORWARDED_HEADERS) {
    const value = request.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  return {
    params: request.params as Record<string, string>,
    query: request.query as Record<string, string | string[] | undefined>,
    body: request.body,
    headers,
  };
}

/** Stores a multipart body's files and puts the form into the call; 415 on routes that take no uploads. */
async function takeUploads(
  accepted: boolean,
  request: MultipartRequest,
  blobs: BlobStorage,
  actor: { organizationId: string },
  call: HttpCall,
  maxFieldBytes: number,
): Promise<FileReference[]> {
  if (!accepted) throw new ProblemError(415, 'this endpoint does not take multipart/form-data');
  const target = Object.values(call.params).join('/') || 'uploads';
  const { form, stored } = await readUploads(
    request,
    blobs,
    `${actor.organizationId}/uploads/${target}`,
    maxFieldBytes,
  );
  call.body = form;
  return stored;
}

export async function buildHttpServer(options: HttpServerOptions): Promise<FastifyInstance> {
  const server = Fastify({
    bodyLimit: options.bodyLimitBytes,
    logger: options.logger ?? false,
    requestIdHeader: 'x-correlation-id',
    genReqId: () => crypto.randomUUID(),
    ajv: { customOptions: { strict: false } },
    // Malformed URLs and over-long path parameters are refused by the router before any hook:
    // answer them as problem+json like every other error.
    frameworkErrors: (error, request, reply) => void sendProblem(reply, toProblem(error, request)),
  });
  // Bodies are validated by the contract schemas in the preHandler, which lists every violation.
  server.setValidatorCompiler(() => () => true);
  server.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(typeof body === 'string' ? body : body.toString('utf8')));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  // Parts are read in the webhook's handler, after authentication: an unknown caller stores nothing.
  await server.register(multipart, {
    limits: {
      files: options.uploads.maxFiles,
      fileSize: options.uploads.fileMaxBytes,
      fieldSize: options.bodyLimitBytes,
      fields: 1000,
      parts: options.uploads.maxFiles + 1000,
    },
  });
  server.addHook('onSend', async (request, reply) => {
    reply.header('x-correlation-id', request.id);
  });
  server.setErrorHandler((error, request, reply) => sendProblem(reply, toProblem(error, request)));
  server.setNotFoundHandler((request, reply) =>
    sendProblem(reply, {
      type: 'https://weft.dev/problems/404',
      title: 'Not Found',
      status: 404,
      detail: `no route ${request.method} ${request.url.split('?')[0] ?? ''}`,
    }),
  );

  await server.register(swagger, {
    openapi: {
      info: { title: 'Weft API', version: '1.0.0', description: 'Event-sourced workflow automation' },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          bearer: { type: 'http', scheme: 'bearer' },
        },
      },
      security: [{ apiKey: [] }, { bearer: [] }],
    },
  });
  await server.register(swaggerUi, { routePrefix: '/api/docs' });

  server.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  server.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    const checks = await options.readiness();
    const ready = Object.values(checks).every(Boolean);
    if (!ready) {
      return sendProblem(reply, {
        type: 'https://weft.dev/problems/503',
        title: 'Service Unavailable',
        status: 503,
        detail: 'not ready',
        checks,
      });
    }
    return { status: 'ready', checks };
  });

  for (const binding of options.bindings) {
    const { route } = binding;
    server.route({
      method: route.method,
      url: route.path,
      schema: {
        summary: route.summary,
        tags: [route.tag],
        ...(route.bodySchema ? { body: route.bodySchema } : {}),
      },
      // One server span per request, continuing the caller's W3C trace context.
      handler: (request, reply) =>
        withSpan(
          `${route.method} ${route.path}`,
          { 'http.request.method': route.method, 'http.route': route.path, 'weft.correlation_id': request.id },
          async (span) => {
            const actor = await authenticate(request, options.authenticator);
            request.actor = actor;
            span.setAttribute('weft.organization_id', actor.organizationId);
            const call = toCall(request);
            validateUrlText(call);
            authorize(route, actor, call.params);
            validateBody(route, call.body);
            const multipart = request as MultipartRequest;
            const uploads = multipart.isMultipart()
              ? await takeUploads(
                  route.acceptsUploads === true,
                  multipart,
                  options.uploads.blobs,
                  actor,
                  call,
                  options.bodyLimitBytes,
                )
              : [];
            const answer = await binding.handle(call, actor, request).catch(async (error: unknown) => {
              await discardUploads(options.uploads.blobs, uploads);
              throw error;
            });
            if (answer.status >= 400) await discardUploads(options.uploads.blobs, uploads);
            span.setAttribute('http.response.status_code', answer.status);
            if (answer.headers) reply.headers(answer.headers);
            reply.code(answer.status);
            if (answer.body instanceof JsonText) {
              // Already JSON: fastify sends a string with a JSON content type as it is (the same
              // text it would make of the object). A type the service set is left to fastify to
              // judge, with the object, exactly as before.
              if (reply.hasHeader('content-type')) return reply.send(answer.body.toJSON());
              reply.type('application/json; charset=utf-8');
              return reply.send(answer.body.text);
            }
            return answer.body === undefined ? reply.send() : reply.send(answer.body);
          },
          { kind: 'server', parent: extractTraceContext(request.headers as Record<string, string | undefined>) },
        ),
    });
  }
  return server;
}
