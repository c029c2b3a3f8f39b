import type { ErrorWebhookPayload } from '@weft/contracts';
import type { ErrorWebhookResult, ErrorWebhookSender } from '../../application/engine-ports.js';
import { guardedFetch, OutboundBlockedError } from './outbound-guard.js';

/**
 * One POST of an execution's failure to the process's error webhook, through the outbound guard,
 * with a timeout. The answer's body is read up to a cap (never whole: the receiver is not
 * trusted) and only its first characters are kept for the attempt's error. Retries, backoff and
 * the record of every attempt belong to `ErrorWebhookDeliveries`.
 */
export interface ErrorWebhookOptions {
  /** WEFT_ERROR_WEBHOOK_TIMEOUT_MS: each attempt's timeout; default 10 s. */
  timeoutMs?: number;
  /** WEFT_OUTBOUND_BLOCK_PRIVATE: refuse loopback, private and link-local targets. */
  blockPrivate?: boolean;
  /** WEFT_ERROR_WEBHOOK_MAX_RESPONSE_BYTES: most of the answer's body read; default 64 KiB. */
  maxResponseBytes?: number;
}

const ERROR_EXCERPT_CHARS = 200;

export class HttpErrorWebhookSender implements ErrorWebhookSender {
  constructor(private readonly options: ErrorWebhookOptions = {}) {}

  async send(url: string, payload: ErrorWebhookPayload, deliveryAttempt: number): Promise<ErrorWebhookResult> {
    try {
      const response = await guardedFetch(
        new URL(url),
        {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'user-agent': 'weft-engine',
            'x-weft-delivery-attempt': String(deliveryAttempt),
          },
          body: JSON.stringify(payload),
          signal: AbortSignal.timeout(this.options.timeoutMs ?? 10_000),
        },
        this.options.blockPrivate === true,
      );
      const body = await readCapped(response.body, this.options.maxResponseBytes ?? 64 * 1024);
      const status = response.status;
      if (status >= 200 && status < 300) return { delivered: true, retry: false, httpStatus: status, error: null };
      const excerpt = body.slice(0, ERROR_EXCERPT_CHARS).trim();
      return {
        delivered: false,
        retry: status >= 500 || status === 408 || status === 429,
        httpStatus: status,
        error: `answered ${status}${excerpt ? `: ${excerpt}` : ''}`,
      };
    } catch (error) {
      // A refused target stays refused; its resolved addresses are not shown to the tenant.
      if (refusedByGuard(error))
        return { delivered: false, retry: false, httpStatus: null, error: 'the outbound guard refused the target' };
      // Network errors and timeouts may pass later.
      const message = error instanceof Error ? error.message : String(error);
      return { delivered: false, retry: true, httpStatus: null, error: message };
    }
  }
}

/** At most `maxBytes` of a body as text; the rest is never read (the stream is cancelled). */
async function readCapped(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<string> {
  if (!body) return '';
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < maxBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      const room = maxBytes - size;
      chunks.push(value.byteLength > room ? value.subarray(0, room) : value);
      size += Math.min(value.byteLength, room);
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The guard's refusal, thrown as is or as the cause of fetch's "fetch failed" (refused while connecting). */
function refusedByGuard(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause)
    if (cause instanceof OutboundBlockedError) return true;
  return false;
}
