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
