#!/usr/bin/env node
import { parseTestCommand, USAGE, UsageError } from './cli-args.js';
import { runTestCommand } from './run-test-command.js';
import { ApiError } from './weft-client.js';

/** `weft test --process <id> ...` for CI: exit 0 when every case passed, 1 when not, 2 on usage or connection errors. */
async function main(): Promise<number> {
  try {
    const options = parseTestCommand(process.argv.slice(2), process.env);
    return await runTestCommand(options, {
      print: (line) => process.stdout.write(`${line}\n`),
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    });
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`weft: ${error.message}\n\n${USAGE}\n`);
      return 2;
    }
    if (error instanceof ApiError) {
      process.stderr.write(`weft: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}

process.exitCode = await main();
