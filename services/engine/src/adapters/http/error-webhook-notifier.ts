import type { ErrorWebhookPayload } from '@weft/contracts';
import type { Logger } from '@weft/observability';
import type { ErrorNotifier } from '../../application/engine-ports.js';
import { guardedFetch, OutboundBlockedError } from './outbound-guard.js';

/**
 * POSTs an execution's failure to the process's error webhook, in the background: a timeout per
 * attempt and retries with exponential backoff on network errors, 5xx and 429. Never blocks or
 * fails an execution.
 */
export interface ErrorWebhookOptions {
  timeoutMs?: number;
  retries?: number;
  /** WEFT_OUTBOUND_BLOCK_PRIVATE: refuse loopback, private and link-local targets. */
  blockPrivate?: boolean;
  backoffMs?: number;
  logger?: Logger;
}

export class HttpErrorNotifier implements ErrorNotifier {
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly options: ErrorWebhookOptions = {}) {}

  notify(url: string, payload: ErrorWebhookPayload): void {
    const sending = this.send(url, payload).finally(() => this.inFlight.delete(sending));
    this.inFlight.add(sending);
  }

  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  private async send(url: string, payload: ErrorWebhookPayload): Promise<void> {
    const retries = this.options.retries ?? 3;
    const body = JSON.stringify(payload);
    for (let attempt = 0; attempt <= retries; attempt++) {
      try {
        const response = await guardedFetch(
          new URL(url),
          {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'user-agent': 'weft-engine' },
            body,
            signal: AbortSignal.timeout(this.options.timeoutMs ?? 10_000),
          },
          this.options.blockPrivate === true,
        );
        await response.body?.cancel();
        if (response.status < 500 && response.status !== 429) return;
      } catch (error) {
        if (error instanceof OutboundBlockedError) {
          this.options.logger?.warn(
            { executionId: payload.executionId, reason: error.message },
            'error webhook refused',
          );
          return;
        }
        // network error or timeout: retried below
      }
      if (attempt < retries) await new Promise((r) => setTimeout(r, (this.options.backoffMs ?? 500) * 2 ** attempt));
    }
    this.options.logger?.warn({ executionId: payload.executionId }, 'error webhook not delivered after retries');
  }
}
