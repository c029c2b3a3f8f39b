import type { WeftConfig } from '@weft/config';
import type { ListenerFactory } from '../application/listener-port.js';
import { gmailListenerFactory, mailListenerOptions, outlookListenerFactory } from './mail/index.js';

/** The mail triggers (./mail), with the provider endpoints (WEFT_GMAIL_API_URL ...) and WEFT_MAIL_* limits. */
export function mailListenerFactories(config: WeftConfig): Record<string, ListenerFactory> {
  const options = mailListenerOptions(config);
  return { gmail: gmailListenerFactory(options), outlook: outlookListenerFactory(options) };
}
