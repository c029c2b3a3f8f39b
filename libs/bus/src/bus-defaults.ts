/** Defaults shared by every Bus implementation, so embedded and distributed modes behave alike. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
export const DEFAULT_RETRY_DELAY_MS = 1_000;
export const DEFAULT_ACK_WAIT_MS = 30_000;

/** Redelivery delay after a failed message: doubles per attempt from `baseMs`, capped at 60 s. */
export const retryDelayMs = (baseMs: number, deliveryCount: number): number =>
  Math.min(baseMs * 2 ** Math.max(0, deliveryCount - 1), 60_000);

/** Largest payload a request or reply may have on either bus (WEFT_BUS_MAX_MESSAGE_BYTES): 64 MiB. */
export const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** How long a partly sent or partly fetched chunked message is kept (idle time since its last chunk). */
export const DEFAULT_CHUNK_TIMEOUT_MS = 30_000;
