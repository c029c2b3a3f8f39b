import type { GraphSnapshot, StoredValueRef } from '@weft/contracts';
import { mergeNodeInput, outputKey } from '../domain/graph/node-input.js';
import type { NodeInputOrigin } from './execution-rows.js';

/** Reads a value that went to blob storage. */
export type ValueReader = (ref: StoredValueRef) => Promise<unknown>;

type Row = Record<string, unknown>;

/**
 * Fills the JSON columns of an execution row and its node rows with the values API users see:
 * values stored as blob references are read back, and each node's input is rebuilt from its
 * references (DESIGN.md: the merge of its parents' inputs plus each parent's output under its
 * label). Node rows hold a node's last run, so inside a loop body the input shown is rebuilt from
 * its parents' last runs, as their outputs are shown. Rows of version 1 events keep their copy.
 */
export async function resolveRowValues(execution: Row, nodes: Row[], readValue?: ValueReader): Promise<void> {
  const read = async (ref: unknown, inline: unknown): Promise<unknown> => {
    if (ref === null || ref === undefined) return inline;
    if (!readValue) throw new Error('this execution holds values in blob storage, but no blob storage is configured');
    return readValue(ref as StoredValueRef);
  };
  execution.input_data = await read(execution.input_ref, execution.input_data);
  execution.output_data = await read(execution.output_ref, execution.output_data);
  const byId = new Map<string, Row>();
  for (const node of nodes) {
    node.output_data = await read(node.output_ref, node.output_data);
    byId.set(String(node.node_id), node);
  }
  const labels = new Map<string, string>();
  for (const node of (execution.graph_snapshot as GraphSnapshot | null)?.nodes ?? []) {
    labels.set(node.id, typeof node.config.label === 'string' ? node.config.label : node.id);
  }

  const inputs = new Map<string, Promise<Record<string, unknown> | null>>();
  const inputOf = (nodeId: string, visiting: ReadonlySet<string>): Promise<Record<string, unknown> | null> => {
    let input = inputs.get(nodeId);
    if (!input) {
      input = rebuild(nodeId, new Set([...visiting, nodeId]));
      inputs.set(nodeId, input);
    }
    return input;
  };
  const rebuild = async (nodeId: string, visiting: ReadonlySet<string>): Promise<Record<string, unknown> | null> => {
    const row = byId.get(nodeId);
    const origin = row?.input_from as NodeInputOrigin | null | undefined;
    if (!origin) return (row?.input_data as Record<string, unknown> | null | undefined) ?? null;
    const enclosing = origin.iteration?.at(-1);
    const parents = [];
    for (const source of origin.inputFrom) {
      if (visiting.has(source.nodeId)) continue;
      const fedByLoop =
        enclosing?.loopNodeId === source.nodeId && ('loopItem' in origin || origin.loopItemRef !== undefined);
      const output = fedByLoop
        ? { item: await read(origin.loopItemRef, origin.loopItem ?? null), index: enclosing.index }
        : (byId.get(source.nodeId)?.output_data ?? null);
      parents.push({
        label: labels.get(source.nodeId) ?? source.nodeId,
        input: (await inputOf(source.nodeId, visiting)) ?? {},
        // A handle that carries one key of its node's output passed on only that key.
        output: source.handle === undefined ? output : outputKey(output, source.handle),
      });
    }
    return mergeNodeInput(parents);
  };
  for (const node of nodes) node.input_data = await inputOf(String(node.node_id), new Set());
}
