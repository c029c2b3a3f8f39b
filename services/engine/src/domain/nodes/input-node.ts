import type { InputNodeConfig } from '@weft/contracts';
import type { NodeExecutor } from './node-executor.js';

/** Emits the trigger's data; an input node that did not fire is skipped by the scheduler. */
export const inputNodeExecutor: NodeExecutor<InputNodeConfig> = {
  type: 'inputNode',
  async execute(_config, _input, context) {
    return { output: context.triggerData };
  },
};
