import type { WeftConfig } from '@weft/config';
import type { ListenerFactory } from '../application/listener-port.js';

/**
 * REGISTRATION POINT for the mail triggers (engineer T2): `gmail` and `outlook` factories from
 * ./mail/index.ts (`gmailListenerFactory(options)`, `outlookListenerFactory(options)`, with
 * WEFT_GMAIL_API_URL, WEFT_GRAPH_API_URL, WEFT_GOOGLE_TOKEN_URL, WEFT_MICROSOFT_TOKEN_URL as
 * endpoint overrides). Until they are registered here, mail input nodes show as failing with
 * "no listener for trigger type" in the listeners endpoint.
 */
export function mailListenerFactories(config: WeftConfig): Record<string, ListenerFactory> {
  void config;
  return {};
}
