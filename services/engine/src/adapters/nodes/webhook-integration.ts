import { createHash, createHmac } from 'node:crypto';
import type { DecryptedConnection, WebhookIntegrationConfig } from '@weft/contracts';
import { NodeFailure, type NodeRunContext } from '../../domain/nodes/node-executor.js';

/**
 * `integrationNode` with `kind: "webhook"`: the body as JSON, signed so that receivers can verify
 * it came from us, was not altered and is not a replay:
 *
 * - `X-Weft-Delivery`: the same for every send of this node's delivery (retries, a re-run after an
 *   engine restart): `<execution id>.<node id>.<first 16 hex of the body's SHA-256>`; receivers
 *   that keep the ids they handled drop repeats;
 * - `X-Weft-Timestamp`: Unix seconds when the node first sent it; receivers refuse old ones;
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

/** The request the HTTP path of the integration node sends for a webhook. */
export function signedWebhookRequest(
  config: WebhookIntegrationConfig,
  secret: string,
  context: Pick<NodeRunContext, 'executionId' | 'node' | 'firstStartedAt'>,
): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify(config.body ?? null);
  const digest = createHash('sha256').update(body, 'utf8').digest('hex').slice(0, 16);
  const delivery = `${context.executionId}.${context.node.id}.${digest}`;
  // The node's first start (kept across restarts), so a re-sent delivery is signed the same way.
  const timestamp = String(Math.floor(context.firstStartedAt.getTime() / 1000));
  return {
    body,
    headers: {
      'content-type': 'application/json',
      [WEBHOOK_DELIVERY_HEADER]: delivery,
      [WEBHOOK_TIMESTAMP_HEADER]: timestamp,
      [WEBHOOK_SIGNATURE_HEADER]: webhookSignature(secret, timestamp, delivery, body),
    },
  };
}
