import type { ScriptNodeConfig } from '@weft/contracts';
import { NodeFailure, type NodeExecutor } from '../../domain/nodes/node-executor.js';
import type { ScriptSandbox } from './script-sandbox.js';

const DEFAULT_TIMEOUT_MS = 5000;
const DEFAULT_MEMORY_MB = 64;

/** Runs `code` in the sandbox with `input` in scope; with `outputs`, returns `{port: data}` and fires those ports. */
export const scriptNodeExecutor = (sandbox: ScriptSandbox): NodeExecutor<ScriptNodeConfig> => ({
  type: 'scriptNode',
  rawConfigKeys: ['code'],
  async execute(config, input, context) {
    const result = await sandbox.run({
      organizationId: context.organizationId,
      code: config.code,
      input,
      timeoutMs: config.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      memoryMb: config.memoryMb ?? DEFAULT_MEMORY_MB,
      signal: context.signal,
    });
    const ports = config.outputs ?? [];
    if (ports.length === 0) return { output: result === undefined ? null : result };
    if (result === null || typeof result !== 'object' || Array.isArray(result)) {
      throw new NodeFailure(`a multi-output script must return an object keyed by port (${ports.join(', ')})`);
    }
    const unknown = Object.keys(result).filter((port) => !ports.includes(port));
    if (unknown.length > 0) throw new NodeFailure(`script returned unknown ports: ${unknown.join(', ')}`);
    return { output: result, handles: Object.keys(result) };
  },
});
