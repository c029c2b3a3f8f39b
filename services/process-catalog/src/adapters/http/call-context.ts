import { badRequest, ProblemError } from '@weft/contracts';
import type { MessageContext } from '@weft/bus';
import type { Caller } from '../../application/caller.js';

/** The caller of a bus message; the gateway always sends an actor, so its absence is a 401. */
export function callerFrom(context: MessageContext): Caller {
  if (!context.actor) throw new ProblemError(401, 'no authenticated actor on the message');
  // traceparent = version-traceid-spanid-flags
  const traceId = context.traceparent?.split('-')[1];
  return {
    actor: context.actor,
    ...(context.correlationId ? { correlationId: context.correlationId } : {}),
    ...(traceId ? { traceId } : {}),
  };
}

/** `If-Match: "7"`, `W/"7"` or `7` -> 7; absent or `*` -> undefined; anything else is a 400. */
export function expectedRevision(headers: Record<string, string | undefined>): number | undefined {
  const raw = headers['if-match']?.trim();
  if (raw === undefined || raw === '' || raw === '*') return undefined;
  const match = /^(?:W\/)?"?(\d{1,9})"?$/.exec(raw);
  if (!match) {
    throw badRequest('If-Match must be a process revision number', [
      { path: '/headers/if-match', message: 'must be a revision number such as "7"' },
    ]);
  }
  return Number(match[1]);
}

export const etag = (revision: number): Record<string, string> => ({ etag: `"${revision}"` });
