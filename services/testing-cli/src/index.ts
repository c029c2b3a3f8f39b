export { parseTestCommand, UsageError, USAGE, type TestCommandOptions } from './cli-args.js';
export { runTestCommand, type CommandIo } from './run-test-command.js';
export { junitReport, escapeXml } from './junit-report.js';
export { ApiError } from './weft-client.js';
export type { Batch, BatchRun } from './batch-types.js';
