import type { BootstrapResult } from './bootstrap-key.js';

/**
 * What a starting process prints about a system key it generated. Only an interactive embedded
 * start shows the key itself; elsewhere output ends up in collected logs, so only the file is named.
 */
export function bootstrapKeyNotice(bootstrap: BootstrapResult, options: { showKey: boolean }): string | undefined {
  if (!bootstrap.generatedKey) return undefined;
  const file = bootstrap.keyFile ?? '';
  if (!options.showKey) return `A system API key was created and written to ${file} (mode 0600); it is not logged.\n`;
  return (
    `\n  A system API key was created. It is shown once here and kept in ${file} (mode 0600):\n` +
    `  ${bootstrap.generatedKey}\n\n`
  );
}
