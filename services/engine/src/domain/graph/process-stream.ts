/**
 * The catalog's event stream of a process (docs/catalog.md): its version is the process's
 * revision. The engine reads it, never writes it.
 */
export const PROCESS_STREAM_PREFIX = 'process-';

export const processStreamId = (processId: string): string => `${PROCESS_STREAM_PREFIX}${processId}`;
