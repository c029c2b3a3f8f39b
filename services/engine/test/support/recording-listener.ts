import type { IterationPath } from '@weft/contracts';
import type { CompletedNode, RunListener } from '../../src/application/graph-runner.js';
import type { GraphNode } from '../../src/domain/graph/execution-graph.js';

/** A run listener that keeps every step, for assertions on order and content. */
export interface RecordedStep {
  step: 'started' | 'completed' | 'failed' | 'skipped';
  label: string;
  iteration: IterationPath;
  input?: Record<string, unknown>;
  output?: unknown;
  handles?: readonly string[];
  tokenUsage?: CompletedNode['tokenUsage'];
  error?: string;
}

export class RecordingListener implements RunListener {
  readonly steps: RecordedStep[] = [];

  nodeStarted(node: GraphNode, input: Record<string, unknown>, iteration: IterationPath): void {
    this.steps.push({ step: 'started', label: node.label, iteration, input });
  }
  nodeCompleted(node: GraphNode, result: CompletedNode, iteration: IterationPath): void {
    this.steps.push({
      step: 'completed',
      label: node.label,
      iteration,
      output: result.output,
      handles: result.handles,
      tokenUsage: result.tokenUsage,
    });
  }
  nodeFailed(node: GraphNode, error: string, iteration: IterationPath): void {
    this.steps.push({ step: 'failed', label: node.label, iteration, error });
  }
  nodeSkipped(node: GraphNode, iteration: IterationPath): void {
    this.steps.push({ step: 'skipped', label: node.label, iteration });
  }

  labels(step: RecordedStep['step']): string[] {
    return this.steps.filter((s) => s.step === step).map((s) => s.label);
  }
  output(label: string): unknown {
    return this.completed(label)?.output;
  }
  completed(label: string): RecordedStep | undefined {
    return this.steps.find((s) => s.step === 'completed' && s.label === label && s.iteration.length === 0);
  }
}
