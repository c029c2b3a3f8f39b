import type { PublishedEventEnvelope } from '@weft/contracts';

/**
 * What subscribers receive at a position whose event could not be published (too large): the
 * same identity, subject and position, no data, and why, so the gap is explained, not silent.
 */
export const placeholderEnvelope = (envelope: PublishedEventEnvelope, reason: string): PublishedEventEnvelope => ({
  ...envelope,
  data: null,
  truncated: true,
  reason,
});

/** Longest reason a minimal placeholder carries. */
const MINIMAL_REASON_CHARS = 200;

/**
 * The placeholder with nothing but the event's identity and a short reason (no metadata): what a
 * stream whose own max_msg_size refused the full placeholder may still take.
 */
export const minimalPlaceholderEnvelope = (
  envelope: PublishedEventEnvelope,
  reason: string,
): PublishedEventEnvelope => ({
  ...placeholderEnvelope(envelope, reason.slice(0, MINIMAL_REASON_CHARS)),
  metadata: {},
});
