import { randomUUID } from 'node:crypto';
import {
  badRequest,
  conflict,
  forbidden,
  notFound,
  ProblemError,
  validateAgainst,
  type ExecutionRecord,
  type HttpCall,
  type HttpReply,
  type JsonSchema,
  type ProcessRecord,
} from '@weft/contracts';
import type { Actor, MessageContext } from '@weft/bus';
import { webhookPayload } from '../domain/webhook-payload.js';
import type { Clock } from './clock.js';
import type { ListenerContext } from './listener-port.js';
import { firingRequest, type ListenerSupervisor } from './listener-supervisor.js';
import type { CatalogPort, ExecutionPort } from './trigger-ports.js';
import type { WebhookRegistry } from '../adapters/webhook/webhook-registry.js';

export interface WebhookRequestsDeps {
  supervisor: ListenerSupervisor;
  registry: WebhookRegistry;
  catalog: CatalogPort;
  executions: ExecutionPort;
  clock: Clock;
  /** Longest sync wait a caller may ask for (WEFT_WEBHOOK_MAX_WAIT_SECONDS). */
  maxWaitSeconds: number;
}

const DEFAULT_WAIT_SECONDS = 30;
const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
const MAX_SCHEMA_CACHE = 256;

const single = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

/** The trace id inside a W3C traceparent (`00-<trace id>-<span id>-<flags>`). */
const traceIdOf = (traceparent: string | undefined): string | undefined => {
  const traceId = traceparent?.split('-')[1];
  return traceId && /^[0-9a-f]{32}$/.test(traceId) && !/^0+$/.test(traceId) ? traceId : undefined;
};

const running = (executionId: string): HttpReply => ({
  status: 202,
  body: { execution_id: executionId, status: 'running' },
  headers: { location: `/api/v1/processes/execution/${executionId}` },
});

/** `POST /processes/:id/webhook` and `GET /processes/:id/listeners` (docs/triggers.md). */
export class WebhookRequests {
  /** Parsed data-block schemas by their JSON text, so ajv compiles each once (validateAgainst caches per object). */
  private readonly schemas = new Map<string, JsonSchema>();

  constructor(private readonly deps: WebhookRequestsDeps) {}

  async webhook(call: HttpCall, context: MessageContext): Promise<HttpReply> {
    const actor = requireActor(context);
    const processId = call.params.id ?? '';
    mayTouch(actor, processId);
    const { process, nodes } = await this.registeredNodes(actor, processId);
    const node = this.chooseNode(nodes, single(call.query.inputNodeId));
    const waitSeconds = this.waitSeconds(call.query);
    const idempotencyKey = call.headers['idempotency-key'];
    if (idempotencyKey !== undefined && (idempotencyKey === '' || idempotencyKey.length > MAX_IDEMPOTENCY_KEY_LENGTH)) {
      throw badRequest('invalid Idempotency-Key', [
        { path: '/headers/idempotency-key', message: `must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters` },
      ]);
    }
    const payload = webhookPayload(call.headers['content-type'], call.body);
    await this.validate(node, payload);
    const options = {
      dedupeKey: idempotencyKey ?? randomUUID(),
      traceId: traceIdOf(context.traceparent),
      correlationId: context.correlationId,
    };
    // The process was just read as running: queue directly (node.fire would read it again).
    if (node.signal.aborted) throw conflict(`process ${processId} is not running`);
    const request = firingRequest(process, node.nodeId, payload, options, this.deps.clock.now());
    const returnLabel = returnToClientLabel(process);
    if (returnLabel === undefined) {
      await this.deps.executions.enqueue(request);
      return running(request.executionId);
    }
    try {
      return syncAnswer(await this.deps.executions.run(request, waitSeconds), returnLabel);
    } catch (error) {
      // Queued durably but not started within the wait (a busy engine): still an accepted, running execution.
      if (error instanceof ProblemError && error.status === 503 && error.problem.executionId === request.executionId) {
        return running(request.executionId);
      }
      throw error;
    }
  }

  async listeners(call: HttpCall, context: MessageContext): Promise<HttpReply> {
    const actor = requireActor(context);
    const processId = call.params.id ?? '';
    mayTouch(actor, processId);
    const process = await this.visibleProcess(actor, processId);
    const status = this.deps.supervisor.statusBoard;
    const listeners = process.nodes
      .filter((node) => node.type === 'inputNode')
      .map((node) => {
        const triggerType = typeof node.config.triggerType === 'string' ? node.config.triggerType : 'manual';
        const known = process.is_running ? status.of(process.id, node.id) : undefined;
        return (
          known ?? {
            node_id: node.id,
            label: typeof node.config.label === 'string' ? node.config.label : node.id,
            trigger_type: triggerType,
            // Manual input nodes never listen; the others do only while the process runs.
            state: triggerType === 'manual' ? 'none' : 'stopped',
            last_success_at: null,
            last_error: null,
            next_run_at: null,
          }
        );
      });
    return { status: 200, body: { process_id: process.id, is_running: process.is_running, listeners } };
  }

  /** The process's registered webhook nodes; 404 when not the caller's, 409 when it does not run. */
  private async registeredNodes(
    actor: Actor,
    processId: string,
  ): Promise<{ process: ProcessRecord; nodes: ListenerContext[] }> {
    // Asked every time: a process stopped a moment ago answers 409 even before its event arrives here.
    const process = await this.visibleProcess(actor, processId);
    if (!process.is_running) throw conflict(`process ${processId} is not running; start it first`);
    const known = this.deps.supervisor.processOf(processId);
    // Started or edited a moment ago: its event may not have reached this replica yet.
    if (known?.revision !== process.revision) await this.deps.supervisor.reconcile(processId);
    const nodes = this.deps.registry.of(processId);
    if (nodes.length === 0) throw conflict(`process ${processId} has no listening webhook input node`);
    return { process, nodes };
  }

  private chooseNode(nodes: ListenerContext[], inputNodeId: string | undefined): ListenerContext {
    if (inputNodeId) {
      const node = nodes.find((candidate) => candidate.nodeId === inputNodeId);
      if (!node) {
        throw badRequest('unknown webhook input node', [
          { path: '/query/inputNodeId', message: `must be one of ${nodes.map((n) => n.nodeId).join(', ')}` },
        ]);
      }
      return node;
    }
    if (nodes.length > 1) {
      throw badRequest('the process has several webhook input nodes; choose one', [
        { path: '/query/inputNodeId', message: `is required: one of ${nodes.map((n) => n.nodeId).join(', ')}` },
      ]);
    }
    return nodes[0]!;
  }

  private waitSeconds(query: HttpCall['query']): number {
    const raw = single(query.waitSeconds);
    if (raw === undefined || raw === '') return Math.min(DEFAULT_WAIT_SECONDS, this.deps.maxWaitSeconds);
    const value = Number(raw);
    if (!Number.isFinite(value) || value < 0 || value > this.deps.maxWaitSeconds) {
      throw badRequest('invalid waitSeconds', [
        { path: '/query/waitSeconds', message: `must be a number from 0 to ${this.deps.maxWaitSeconds}` },
      ]);
    }
    return value;
  }

  /** With schemaId and dataBlockId on the node, the payload must match that block's JSON schema (every violation listed). */
  private async validate(node: ListenerContext, payload: unknown): Promise<void> {
    const { schemaId, dataBlockId } = node.config;
    if (typeof schemaId !== 'string' || typeof dataBlockId !== 'string' || !schemaId || !dataBlockId) return;
    const jsonSchema = await this.deps.catalog.dataBlockSchema(schemaId, dataBlockId, node.organizationId);
    const violations = validateAgainst(this.cachedSchema(jsonSchema), payload);
    if (violations.length > 0) {
      throw badRequest(
        `the payload does not match data block ${dataBlockId} of schema ${schemaId}`,
        violations.map((violation) => ({
          ...violation,
          path: violation.path === '/' ? '/body' : `/body${violation.path}`,
        })),
      );
    }
  }

  private cachedSchema(jsonSchema: unknown): JsonSchema {
    const text = JSON.stringify(jsonSchema);
    let schema = this.schemas.get(text);
    if (!schema) {
      if (this.schemas.size >= MAX_SCHEMA_CACHE) this.schemas.delete(this.schemas.keys().next().value!);
      // A boolean schema (true: anything, false: nothing) as the object schema ajv caches.
      schema = (typeof jsonSchema === 'boolean' ? (jsonSchema ? {} : { not: {} }) : jsonSchema) as JsonSchema;
      this.schemas.set(text, schema);
    }
    return schema;
  }

  private async visibleProcess(actor: Actor, processId: string): Promise<ProcessRecord> {
    const process = await this.deps.catalog.getProcess(processId, actor.system ? undefined : actor.organizationId);
    if (!actor.system && process.organization_id !== actor.organizationId)
      throw notFound(`process ${processId} not found`);
    return process;
  }
}

const requireActor = (context: MessageContext): Actor => {
  if (!context.actor) throw new ProblemError(401, 'no authenticated actor');
  return context.actor;
};

const mayTouch = (actor: Actor, processId: string): void => {
  if (!actor.system && actor.processIds && !actor.processIds.includes(processId)) {
    throw forbidden('this API key is restricted to other processes');
  }
};

/** Label of the Return to Client output node (DESIGN.md: `config.returnToClient: true`), if any. */
const returnToClientLabel = (process: ProcessRecord): string | undefined => {
  const node = process.nodes.find(
    (candidate) => candidate.type === 'outputNode' && candidate.config.returnToClient === true,
  );
  if (!node) return undefined;
  return typeof node.config.label === 'string' ? node.config.label : node.id;
};

/** 200 with the Return to Client node's output, 202 past the wait, problem+json with execution_id when it failed. */
function syncAnswer(record: ExecutionRecord, returnLabel: string): HttpReply {
  if (record.status === 'running') return running(record.execution_id);
  if (record.status === 'completed') {
    const outputs = (record.output_data ?? {}) as Record<string, unknown>;
    return { status: 200, body: outputs[returnLabel] ?? null };
  }
  throw new ProblemError(500, record.error_message ?? `the execution ended ${record.status}`, {
    type: 'https://weft.dev/problems/execution-failed',
    title: 'Execution Failed',
    execution_id: record.execution_id,
    execution_status: record.status,
  });
}
