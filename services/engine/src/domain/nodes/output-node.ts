import type { OutputNodeConfig } from '@weft/contracts';
import type { NodeExecutor } from './node-executor.js';

/** Collects the resolved `fields`, else its whole input; the execution's output_data gathers these. */
export const outputNodeExecutor: NodeExecutor<OutputNodeConfig> = {
  type: 'outputNode',
  async execute(config, input) {
    return { output: config.fields && typeof config.fields === 'object' ? config.fields : input };
  },
};
