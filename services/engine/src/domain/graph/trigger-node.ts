import { badRequest, type ProcessRecord } from '@weft/contracts';

/** The input node an execution starts from: the one asked for, else the process's only input node. */
export function chooseTriggerNode(
  process: Pick<ProcessRecord, 'id' | 'nodes'>,
  inputNodeId: string | undefined,
): string {
  const inputs = process.nodes.filter((node) => node.type === 'inputNode');
  if (inputNodeId) {
    if (!inputs.some((node) => node.id === inputNodeId)) {
      throw badRequest(`node ${inputNodeId} is not an input node of process ${process.id}`, [
        { path: '/query/inputNodeId', message: 'is not an input node of this process' },
      ]);
    }
    return inputNodeId;
  }
  const [only, ...others] = inputs;
  if (!only)
    throw badRequest(`process ${process.id} has no input node`, [{ path: '/nodes', message: 'has no input node' }]);
  if (others.length > 0) {
    throw badRequest(`process ${process.id} has several input nodes: choose one with inputNodeId`, [
      { path: '/query/inputNodeId', message: `is required: one of ${inputs.map((node) => node.id).join(', ')}` },
    ]);
  }
  return only.id;
}
