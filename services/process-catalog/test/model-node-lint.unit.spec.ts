import { lintProcess } from '../src/domain/lint/lint-process.js';
import type { KnownSchema } from '../src/domain/lint/lint-finding.js';
import type { GraphNode } from '../src/domain/process/graph.js';

const node = (type: string, config: Record<string, unknown>): GraphNode =>
  ({ id: '00000000-0000-4000-8000-0000000000b1', type, config }) as GraphNode;

const schema: KnownSchema = {
  id: 'schema-1',
  dataBlocks: [
    { id: 'b1', name: 'invoice' },
    { id: 'b2', name: 'customer' },
  ],
};

const findings = (type: string, config: Record<string, unknown>): string[] =>
  lintProcess({ nodes: [node(type, config)], edges: [] }, new Map([[schema.id, schema]]))
    .findings.filter(
      (finding) =>
        !['no-orphan-nodes', 'input-node-exists', 'output-node-exists', 'template-references'].includes(finding.check),
    )
    .map((finding) => `${finding.check}: ${finding.message}`);

describe('lint of the schematization and ML model nodes', () => {
  const mapping = {
    label: 'Extract',
    schemaId: 'schema-1',
    selectedDataBlocks: ['invoice', 'customer'],
    mode: 'mapping',
    mappings: { invoice: 'In.invoice', customer: 'In.customer' },
  };

  test('a complete mapping or llm config has no finding', () => {
    expect(findings('schematizationNode', mapping)).toEqual([]);
    expect(
      findings('schematizationNode', {
        label: 'Extract',
        schemaId: 'schema-1',
        selectedDataBlocks: ['invoice'],
        mode: 'llm',
        connectionId: 'c1',
        source: '{{input["In"]["text"]}}',
        maxRepairs: 3,
      }),
    ).toEqual([]);
  });

  test('a block without a mapping, an unknown block and a missing mode are findings', () => {
    expect(findings('schematizationNode', { ...mapping, mappings: { invoice: 'In.invoice' } })).toEqual([
      'schema-references: node "Extract": data block "customer" has no mapping',
    ]);
    expect(findings('schematizationNode', { ...mapping, selectedDataBlocks: ['invoice', 'receipt'] })).toContain(
      'schema-references: node "Extract": data block "receipt" is not in schema schema-1',
    );
    expect(findings('schematizationNode', { ...mapping, mode: undefined }).join('\n')).toMatch(
      /node-config: .*\/config must have required property 'mode'/,
    );
  });

  test('llm mode needs its connection and source, and maxRepairs is bounded', () => {
    const found = findings('schematizationNode', {
      label: 'Extract',
      schemaId: 'schema-1',
      selectedDataBlocks: ['invoice'],
      mode: 'llm',
      maxRepairs: 50,
    }).join('\n');
    expect(found).toMatch(/\/config\/connectionId is required/);
    expect(found).toMatch(/\/config\/source is required/);
    expect(found).toMatch(/\/config\/maxRepairs must be <= 10/);
  });

  test('mlModelNode: each provider and operation asks for its own fields', () => {
    expect(findings('mlModelNode', { label: 'M' }).join('\n')).toMatch(/must have required property 'provider'/);
    expect(findings('mlModelNode', { label: 'M', provider: 'openai', operation: 'chat' }).join('\n')).toMatch(
      /must have required property 'connectionId'/,
    );
    const chat = findings('mlModelNode', { label: 'M', provider: 'openai', connectionId: 'c', operation: 'chat' });
    expect(chat.join('\n')).toMatch(/must have required property 'messages'/);
    const embeddings = findings('mlModelNode', {
      label: 'M',
      provider: 'openai',
      connectionId: 'c',
      operation: 'embeddings',
    });
    expect(embeddings.join('\n')).toMatch(/must have required property 'input'/);
    const onnx = findings('mlModelNode', {
      label: 'M',
      provider: 'onnx',
      model: 'org/models/m.onnx',
      inputs: { a: { data: [1], dims: [-1], type: 'float16' } },
    }).join('\n');
    expect(onnx).toMatch(/inputs\/a\/type must be equal to one of the allowed values/);
    expect(
      findings('mlModelNode', {
        label: 'M',
        provider: 'onnx',
        model: 'org/models/m.onnx',
        inputs: { a: { data: '{{input["In"]["x"]}}', dims: [1, 3] } },
      }),
    ).toEqual([]);
    expect(
      findings('mlModelNode', {
        label: 'M',
        provider: 'openai',
        connectionId: 'c',
        operation: 'chat',
        messages: [{ role: 'user', content: 'hi' }],
        responseSchema: { type: 'object' },
      }),
    ).toEqual([]);
  });

  test('the connection of llm mode and of the openai provider must exist and be an llm connection', () => {
    const connections = new Map([
      ['c-llm', { id: 'c-llm', type: 'llm' }],
      ['c-http', { id: 'c-http', type: 'http' }],
    ]);
    const withConnections = (type: string, config: Record<string, unknown>): string[] =>
      lintProcess({ nodes: [node(type, config)], edges: [] }, new Map([[schema.id, schema]]), connections)
        .findings.filter((finding) => finding.check === 'node-config')
        .map((finding) => finding.message);
    const chat = (connectionId: string) => ({
      label: 'M',
      provider: 'openai',
      connectionId,
      operation: 'chat',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(withConnections('mlModelNode', chat('c-llm'))).toEqual([]);
    expect(withConnections('mlModelNode', chat('c-http'))).toEqual([
      'node "M" (mlModelNode): /config/connectionId: connection "c-http" is a http connection; it must be llm',
    ]);
    expect(
      withConnections('schematizationNode', {
        label: 'Extract',
        schemaId: 'schema-1',
        selectedDataBlocks: ['invoice'],
        mode: 'llm',
        connectionId: 'gone',
        source: 'text',
      }),
    ).toEqual(['node "Extract" (schematizationNode): /config/connectionId: connection "gone" does not exist']);
    expect(
      withConnections('mlModelNode', {
        label: 'M',
        provider: 'onnx',
        model: 'https://models.example/m.onnx',
        connectionId: 'c-llm',
        inputs: { a: { data: [1], dims: [1] } },
      }),
    ).toEqual([
      'node "M" (mlModelNode): /config/connectionId: connection "c-llm" is a llm connection; it must be http',
    ]);
  });
});
