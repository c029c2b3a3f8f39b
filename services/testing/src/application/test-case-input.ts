import {
  badRequest,
  testCaseBodySchema,
  validateAgainst,
  type ProblemViolation,
  type ProcessRecord,
  type TestCaseInput,
} from '@weft/contracts';
import type { TestCaseFields } from '../domain/test-case/test-case-events.js';
import { ignoreFieldProblem } from '../domain/validation/ignore-fields.js';
import { outputSchemaProblem } from '../domain/validation/output-schema.js';

/**
 * A test case body checked against its process: the body schema, `inputNodeId` an input node of
 * the process, `expectedOutputSchema` compiling, each ignoreFields entry a usable JSONPath. Every
 * problem is listed in one 400.
 */
export function readTestCaseInput(body: unknown, process: Pick<ProcessRecord, 'nodes'>): TestCaseFields {
  const errors: ProblemViolation[] = validateAgainst(testCaseBodySchema, body ?? {});
  if (errors.length > 0) throw badRequest('invalid test case', errors);
  const input = body as TestCaseInput;
  const node = process.nodes.find((candidate) => candidate.id === input.inputNodeId);
  if (!node || node.type !== 'inputNode') {
    const inputs = process.nodes.filter((candidate) => candidate.type === 'inputNode').map((candidate) => candidate.id);
    errors.push({
      path: '/inputNodeId',
      message: `must be an input node of the process (${inputs.length ? inputs.join(', ') : 'it has none'})`,
    });
  }
  const schema = input.expectedOutputSchema ?? {};
  const schemaProblem = outputSchemaProblem(schema);
  if (schemaProblem) errors.push({ path: '/expectedOutputSchema', message: `does not compile: ${schemaProblem}` });
  (input.ignoreFields ?? []).forEach((path, index) => {
    const problem = ignoreFieldProblem(path);
    if (problem) errors.push({ path: `/ignoreFields/${index}`, message: problem });
  });
  if (errors.length > 0) throw badRequest('invalid test case', errors);
  return {
    name: input.name,
    description: input.description ?? '',
    inputNodeId: input.inputNodeId,
    inputData: input.inputData ?? {},
    expectedOutputSchema: schema,
    expectedFiles: input.expectedFiles ?? null,
    ignoreFields: input.ignoreFields ?? [],
    tags: [...new Set(input.tags ?? [])],
    disabled: input.disabled ?? false,
  };
}
