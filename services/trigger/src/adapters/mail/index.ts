export {
  gmailListenerFactory,
  outlookListenerFactory,
  MAIL_DEFAULTS,
  type MailListenerOptions,
} from './mail-listener-factories.js';
export { mailListenerOptions } from './mail-listener-options.js';
