import type { ExecutionCommand } from '../../src/domain/execution/commands.js';

type StartCommand = Extract<ExecutionCommand, { type: 'StartExecution' }>;

/** A StartExecution command as the engine makes one (start-execution.ts), with what a test sets. */
export const startCommand = (data: Partial<StartCommand['data']> = {}): StartCommand => ({
  type: 'StartExecution',
  data: {
    executionId: crypto.randomUUID(),
    processId: crypto.randomUUID(),
    organizationId: crypto.randomUUID(),
    processRevision: 1,
    triggerNodeId: 'In',
    inputData: {},
    graphSnapshot: { nodes: [{ id: 'In', type: 'inputNode', position: { x: 0, y: 0 }, config: {} }], edges: [] },
    triggeredByUserId: null,
    source: 'test',
    timeoutSeconds: 300,
    maxRetries: 0,
    errorWebhookUrl: null,
    ...data,
  },
  metadata: { now: new Date() },
});
