import type { WeftConfig } from '@weft/config';
import type { ListenerFactory } from '../application/listener-port.js';
import { gmailListenerFactory, outlookListenerFactory } from './mail/index.js';

/** The mail triggers (./mail), with the provider endpoints WEFT_GMAIL_API_URL, WEFT_GRAPH_API_URL ... may override. */
export function mailListenerFactories(config: WeftConfig): Record<string, ListenerFactory> {
  const options = {
    gmailApiUrl: config.providers.gmailApiUrl,
    graphApiUrl: config.providers.graphApiUrl,
    googleTokenUrl: config.providers.googleTokenUrl,
    microsoftTokenUrl: config.providers.microsoftTokenUrl,
  };
  return { gmail: gmailListenerFactory(options), outlook: outlookListenerFactory(options) };
}
