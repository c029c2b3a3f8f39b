import { lintProcess } from '../src/domain/lint/lint-process.js';
import type { GraphNode } from '../src/domain/process/graph.js';

const node = (type: string, config: Record<string, unknown>): GraphNode =>
  ({ id: '00000000-0000-4000-8000-0000000000a1', type, config }) as GraphNode;

const findings = (type: string, config: Record<string, unknown>): string[] =>
  lintProcess({ nodes: [node(type, config)], edges: [] }, new Map())
    .findings.filter(
      (finding) => !['no-orphan-nodes', 'input-node-exists', 'output-node-exists'].includes(finding.check),
    )
    .map((finding) => `${finding.check}: ${finding.message}`);

describe('lint of the email, webhook, OCR and web automation nodes', () => {
  test('an email integration asks for its connection, recipients and subject, not a method or url', () => {
    const found = findings('integrationNode', { label: 'Mail', kind: 'email' });
    expect(found.join('\n')).toMatch(/connectionId/);
    expect(found.join('\n')).toMatch(/subject/);
    expect(found.join('\n')).not.toMatch(/method/);
    expect(
      findings('integrationNode', { label: 'Mail', kind: 'email', connectionId: 'c', to: 'a@x.test', subject: 's' }),
    ).toEqual([]);
  });

  test('a webhook integration needs its url and a connection (its signingSecret) or a secret', () => {
    const missing = findings('integrationNode', { label: 'Hook', kind: 'webhook', url: 'https://x.test' }).join('\n');
    expect(missing).toMatch(/connectionId/);
    expect(missing).toMatch(/secret/);
    expect(
      findings('integrationNode', { label: 'Hook', kind: 'webhook', url: 'https://x.test', connectionId: 'c' }),
    ).toEqual([]);
    expect(findings('integrationNode', { label: 'Hook', kind: 'webhook', url: 'https://x.test', secret: 's' })).toEqual(
      [],
    );
  });

  test.each(['webhook', 'http'])("a %s integration's connection is an http connection", (kind) => {
    const hook = { label: 'Hook', kind, url: 'https://x.test', connectionId: 'c-2' };
    const lint = (type: string) =>
      lintProcess(
        { nodes: [node('integrationNode', hook)], edges: [] },
        new Map(),
        new Map([['c-2', { id: 'c-2', type }]]),
      )
        .findings.filter((finding) => finding.check === 'node-config')
        .map((finding) => finding.message);
    expect(lint('http')).toEqual([]);
    expect(lint('smtp')).toEqual([
      'node "Hook" (integrationNode): /config/connectionId: connection "c-2" is a smtp connection; it must be http',
    ]);
  });

  test('OCR and web automation nodes are checked against their config contracts', () => {
    expect(findings('ocrNode', { label: 'Scan' }).join('\n')).toMatch(/file/);
    expect(findings('webAutomationNode', { label: 'Browse', steps: [{ action: 'goto' }] }).join('\n')).toMatch(
      /steps\/0 must have required property 'url'/,
    );
    expect(
      findings('webAutomationNode', { label: 'Browse', steps: [{ action: 'goto', url: 'http://x.test/' }] }),
    ).toEqual([]);
  });

  test('an email integration names an existing smtp connection', () => {
    const mail = { label: 'Mail', kind: 'email', connectionId: 'c-1', to: 'a@x.test', subject: 's' };
    const lint = (connections: [string, { id: string; type: string }][]) =>
      lintProcess({ nodes: [node('integrationNode', mail)], edges: [] }, new Map(), new Map(connections))
        .findings.filter((finding) => finding.check === 'node-config')
        .map((finding) => finding.message);
    expect(lint([['c-1', { id: 'c-1', type: 'smtp' }]])).toEqual([]);
    expect(lint([['c-1', { id: 'c-1', type: 'http' }]])).toEqual([
      'node "Mail" (integrationNode): /config/connectionId: connection "c-1" is a http connection; it must be smtp',
    ]);
    expect(lint([])).toEqual(['node "Mail" (integrationNode): /config/connectionId: connection "c-1" does not exist']);
  });
});
