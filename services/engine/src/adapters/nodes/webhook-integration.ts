import { createHmac } from 'node:crypto';
import type { WebhookIntegrationConfig } from '@weft/contracts';

/**
 * `integrationNode` with `kind: "webhook"`: the body as JSON, signed so that receivers can verify
 * it came from us and was not altered: `X-Weft-Signature: sha256=<hex HMAC-SHA256 of the exact
 * bytes sent, keyed with the secret>`.
 */
export const WEBHOOK_SIGNATURE_HEADER = 'x-weft-signature';

export const webhookSignature = (secret: string, body: string): string =>
  `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;

/** The request the HTTP path of the integration node sends for a webhook. */
export function signedWebhookRequest(config: WebhookIntegrationConfig): {
  body: string;
  headers: Record<string, string>;
} {
  const body = JSON.stringify(config.body ?? null);
  return {
    body,
    headers: {
      'content-type': 'application/json',
      [WEBHOOK_SIGNATURE_HEADER]: webhookSignature(config.secret, body),
    },
  };
}
