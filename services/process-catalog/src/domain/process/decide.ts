import { badRequest, conflict, locked, notFound, ProblemError } from '@weft/contracts';
import type { LintFinding } from '../lint/lint-finding.js';
import { lintProcess } from '../lint/lint-process.js';
import { sameJson } from '../shared/same-json.js';
import type { Violation } from '../shared/violation.js';
import type { ProcessCommand } from './commands.js';
import type { ProcessEvent, ProcessSettings } from './events.js';
import { nodeLabel, type Graph, type GraphNode } from './graph.js';
import { duplicateEdgeViolations, edgeViolations, graphViolations, nodeViolations } from './graph-rules.js';
import { settingsViolations } from './settings-rules.js';
import type { ProcessState } from './state.js';
import { renameLabelInValue } from './templates.js';

const invalid = (violations: Violation[]): ProblemError =>
  badRequest(
    violations
      .map((violation) => (violation.path ? `${violation.path}: ${violation.message}` : violation.message))
      .join('; '),
    violations,
  );

const findingPath = (finding: LintFinding): string =>
  finding.nodeId ? `/nodes/${finding.nodeId}` : finding.edgeId ? `/edges/${finding.edgeId}` : '';

const refuseIfInvalid = (violations: Violation[]): void => {
  if (violations.length > 0) throw invalid(violations);
};

const requireActive = (state: ProcessState): void => {
  if (state.status !== 'active') throw notFound('process not found');
};

/** Nodes, edges and settings are frozen while locked (spec "Process lock"). */
const requireUnlocked = (state: ProcessState): void => {
  if (state.locked) throw locked(`process ${state.id} is locked; unlock it to edit`);
};

const findNode = (state: ProcessState, nodeId: string): GraphNode => {
  const node = state.nodes.find((candidate) => candidate.id === nodeId);
  if (!node) throw notFound(`node ${nodeId} is not in process ${state.id}`);
  return node;
};

const onlyChanges = (state: ProcessState, changes: Partial<ProcessSettings>): Partial<ProcessSettings> =>
  Object.fromEntries(
    Object.entries(changes).filter(
      ([key, value]) => value !== undefined && state[key as keyof ProcessSettings] !== value,
    ),
  );

const sameGraph = (state: ProcessState, graph: Graph): boolean =>
  sameJson(state.nodes, graph.nodes) && sameJson(state.edges, graph.edges);

/** Pure decider of the process aggregate: refuses with a ProblemError or returns the events. */
export function decide(command: ProcessCommand, state: ProcessState): ProcessEvent[] {
  const at = command.metadata.now;
  switch (command.type) {
    case 'CreateProcess': {
      if (state.status !== 'new') throw conflict(`process ${command.data.processId} exists already`);
      const { nodes, edges, origin, ...settings } = command.data;
      refuseIfInvalid([...settingsViolations(settings), ...graphViolations({ nodes, edges })]);
      return [
        {
          type: 'ProcessCreated',
          data: {
            ...settings,
            nodes,
            edges,
            ...(origin ? { origin } : {}),
            createdBy: command.metadata.actorName,
            createdById: command.metadata.actorId,
            at,
          },
        },
      ];
    }
    case 'ChangeProcessSettings': {
      requireActive(state);
      requireUnlocked(state);
      const { graph } = command.data;
      refuseIfInvalid([...settingsViolations(command.data.changes), ...(graph ? graphViolations(graph) : [])]);
      const changes = onlyChanges(state, command.data.changes);
      const events: ProcessEvent[] = [];
      if (Object.keys(changes).length > 0) events.push({ type: 'ProcessSettingsChanged', data: { changes, at } });
      if (graph && !sameGraph(state, graph)) events.push({ type: 'GraphReplaced', data: { ...graph, at } });
      return events;
    }
    case 'DeleteProcess':
      requireActive(state);
      requireUnlocked(state);
      return [{ type: 'ProcessDeleted', data: { at } }];
    case 'AddNode': {
      requireActive(state);
      requireUnlocked(state);
      const { node } = command.data;
      if (state.nodes.some((existing) => existing.id === node.id)) throw conflict(`node id ${node.id} is already used`);
      const label = nodeLabel(node);
      refuseIfInvalid([
        ...nodeViolations(node, ''),
        ...(label !== undefined && state.nodes.some((other) => nodeLabel(other) === label)
          ? [{ path: '/config/label', message: `label "${label}" is already used by another node` }]
          : []),
      ]);
      return [{ type: 'NodeAdded', data: { node, at } }];
    }
    case 'UpdateNode': {
      requireActive(state);
      requireUnlocked(state);
      const { nodeId, type, position, config } = command.data;
      const current = findNode(state, nodeId);
      let node: GraphNode = {
        ...current,
        ...(type === undefined ? {} : { type }),
        ...(position === undefined ? {} : { position }),
        ...(config === undefined ? {} : { config }),
      };
      const before = nodeLabel(current);
      const after = nodeLabel(node);
      const renamed = before !== undefined && after !== undefined && before !== after;
      const rewrittenConfigs: { nodeId: string; config: Record<string, unknown> }[] = [];
      if (renamed) {
        node = { ...node, config: renameLabelInValue(node.config, before, after) };
        for (const other of state.nodes) {
          if (other.id === nodeId) continue;
          const rewritten = renameLabelInValue(other.config, before, after);
          if (!sameJson(rewritten, other.config)) {
            rewrittenConfigs.push({ nodeId: other.id, config: rewritten });
          }
        }
      }
      const nodes = state.nodes.map((existing) => (existing.id === nodeId ? node : existing));
      const nodesById = new Map(nodes.map((existing) => [existing.id, existing]));
      refuseIfInvalid([
        ...nodeViolations(node, ''),
        // The request names one node, so a clash is reported on its own label whichever node came first.
        ...(after !== undefined && state.nodes.some((other) => other.id !== nodeId && nodeLabel(other) === after)
          ? [{ path: '/config/label', message: `label "${after}" is already used by another node` }]
          : []),
        // A type or config change must not strand edges on handles the node no longer has.
        ...state.edges
          .filter((edge) => edge.sourceNodeId === nodeId)
          .flatMap((edge) =>
            edgeViolations(edge, nodesById, `/edges/${edge.id}`).map((violation) => ({
              path: '/config',
              message: `edge ${edge.id} would lose its source handle: ${violation.message}`,
            })),
          ),
      ]);
      if (sameJson(node, current) && rewrittenConfigs.length === 0) return [];
      return [{ type: 'NodeUpdated', data: { node, rewrittenConfigs, at } }];
    }
    case 'DeleteNode': {
      requireActive(state);
      requireUnlocked(state);
      const { nodeId } = command.data;
      findNode(state, nodeId);
      const removedEdgeIds = state.edges
        .filter((edge) => edge.sourceNodeId === nodeId || edge.targetNodeId === nodeId)
        .map((edge) => edge.id);
      return [{ type: 'NodeDeleted', data: { nodeId, removedEdgeIds, at } }];
    }
    case 'AddEdge': {
      requireActive(state);
      requireUnlocked(state);
      const { edge } = command.data;
      if (state.edges.some((existing) => existing.id === edge.id)) throw conflict(`edge id ${edge.id} is already used`);
      const nodesById = new Map(state.nodes.map((node) => [node.id, node]));
      const edges = [...state.edges, edge];
      refuseIfInvalid([
        ...edgeViolations(edge, nodesById, ''),
        ...duplicateEdgeViolations(edges, (index) => (index === edges.length - 1 ? '' : `/edges/${index}`)),
      ]);
      return [{ type: 'EdgeAdded', data: { edge, at } }];
    }
    case 'DeleteEdge': {
      requireActive(state);
      requireUnlocked(state);
      const { edgeId } = command.data;
      if (!state.edges.some((edge) => edge.id === edgeId))
        throw notFound(`edge ${edgeId} is not in process ${state.id}`);
      return [{ type: 'EdgeDeleted', data: { edgeId, at } }];
    }
    case 'ReplaceGraph': {
      requireActive(state);
      requireUnlocked(state);
      refuseIfInvalid(graphViolations(command.data));
      if (sameGraph(state, command.data)) return [];
      return [{ type: 'GraphReplaced', data: { nodes: command.data.nodes, edges: command.data.edges, at } }];
    }
    case 'LockProcess':
      requireActive(state);
      return state.locked ? [] : [{ type: 'ProcessLocked', data: { at } }];
    case 'UnlockProcess':
      requireActive(state);
      return state.locked ? [{ type: 'ProcessUnlocked', data: { at } }] : [];
    case 'StartProcess': {
      requireActive(state);
      if (state.isRunning) return [];
      const connections = command.data.connections && new Map(command.data.connections.map((c) => [c.id, c]));
      const report = lintProcess(
        state,
        new Map(command.data.schemas.map((schema) => [schema.id, schema])),
        connections,
      );
      if (!report.valid) {
        throw new ProblemError(400, 'the process does not pass lint; fix the findings and start it again', {
          errors: report.findings.map((finding) => ({ path: findingPath(finding), message: finding.message })),
          findings: report.findings,
        });
      }
      return [{ type: 'ProcessStarted', data: { at } }];
    }
    case 'StopProcess':
      requireActive(state);
      return state.isRunning ? [{ type: 'ProcessStopped', data: { at } }] : [];
    case 'CreateVersion': {
      requireActive(state);
      const { versionId, label } = command.data;
      if (typeof label !== 'string')
        throw badRequest('label must be a string', [{ path: '/label', message: 'must be a string' }]);
      return [
        {
          type: 'VersionCreated',
          data: {
            versionId,
            versionNumber: state.lastVersionNumber + 1,
            label,
            snapshot: { nodes: state.nodes, edges: state.edges },
            createdBy: command.metadata.actorName,
            createdById: command.metadata.actorId,
            at,
          },
        },
      ];
    }
    case 'DeleteVersion':
      requireActive(state);
      if (!state.versionIds.includes(command.data.versionId))
        throw notFound(`version ${command.data.versionId} not found`);
      return [{ type: 'VersionDeleted', data: { versionId: command.data.versionId, at } }];
    case 'RestoreVersion': {
      requireActive(state);
      const { versionId, versionNumber, snapshot } = command.data;
      if (!state.versionIds.includes(versionId)) throw notFound(`version ${versionId} not found`);
      requireUnlocked(state);
      return [
        {
          type: 'VersionRestored',
          data: { versionId, versionNumber, nodes: snapshot.nodes, edges: snapshot.edges, at },
        },
      ];
    }
    default: {
      const unknownCommand: never = command;
      return unknownCommand;
    }
  }
}
