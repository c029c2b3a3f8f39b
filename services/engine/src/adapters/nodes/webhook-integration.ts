import { createHash, createHmac } from 'node:crypto';
import type { DecryptedConnection, WebhookIntegrationConfig } from '@weft/contracts';
import { NodeFailure, type NodeRunContext } from '../../domain/nodes/node-executor.js';

/**
 * `integrationNode` with `kind: "webhook"`: the body as JSON, signed so that receivers can verify
 * it came from us, was not altered and is not a replay:
 *
 * - `X-Weft-Delivery`: the same for every send of this node run's delivery (retries, a re-run
 *   after an engine restart): `<execution id>.<run key>.<first 16 hex of the body's SHA-256>`,
 *   the run key being the node id, prefixed inside a loop body by `<loop node id>#<index>/` per
 *   enclosing loop (each iteration is a delivery of its own); receivers that keep the ids they
 *   handled drop repeats;
 * - `X-Weft-Timestamp`: Unix seconds when this attempt was sent; receivers refuse old ones;
 * - `X-Weft-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<delivery>.<exact body bytes>">`,
 *   keyed with the secret: the `signingSecret` of the node's `http` connection (encrypted at rest,
 *   never returned), or an inline `secret` (stored in the process definition as written).
 */
export const WEBHOOK_SIGNATURE_HEADER = 'x-weft-signature';
export const WEBHOOK_DELIVERY_HEADER = 'x-weft-delivery';
export const WEBHOOK_TIMESTAMP_HEADER = 'x-weft-timestamp';

export const webhookSignature = (secret: string, timestamp: string, delivery: string, body: string): string =>
  `sha256=${createHmac('sha256', secret).update(`${timestamp}.${delivery}.${body}`, 'utf8').digest('hex')}`;

/** The signing secret: the connection's `signingSecret`, else the inline `secret`. */
export function webhookSecret(config: WebhookIntegrationConfig, connection: DecryptedConnection | undefined): string {
  if (connection) {
    const secret = connection.data.signingSecret;
    if (typeof secret === 'string' && secret.length > 0) return secret;
    if (config.secret === undefined)
      throw new NodeFailure(`connection ${connection.id} has no signingSecret to sign the webhook with`);
  }
  if (config.secret === undefined)
    throw new NodeFailure('a webhook needs a connectionId (its signingSecret) or a secret');
  return config.secret;
}

/** One delivery of a webhook node run: the body and its id, the same on every attempt. */
export interface WebhookDelivery {
  secret: string;
  body: string;
  delivery: string;
}

export function webhookDelivery(
  config: WebhookIntegrationConfig,
  secret: string,
  context: Pick<NodeRunContext, 'executionId' | 'runKey'>,
): WebhookDelivery {
  const body = JSON.stringify(config.body ?? null);
  const digest = createHash('sha256').update(body, 'utf8').digest('hex').slice(0, 16);
  return { secret, body, delivery: `${context.executionId}.${context.runKey}.${digest}` };
}

/** The headers of one attempt, signed with the time it is sent. */
export function signedWebhookHeaders(webhook: WebhookDelivery, sentAt: Date): Record<string, string> {
  const timestamp = String(Math.floor(sentAt.getTime() / 1000));
  return {
    'content-type': 'application/json',
    [WEBHOOK_DELIVERY_HEADER]: webhook.delivery,
    [WEBHOOK_TIMESTAMP_HEADER]: timestamp,
    [WEBHOOK_SIGNATURE_HEADER]: webhookSignature(webhook.secret, timestamp, webhook.delivery, webhook.body),
  };
}
