export {
  gmailListenerFactory,
  outlookListenerFactory,
  MAIL_DEFAULTS,
  type MailListenerOptions,
} from './mail-listener-factories.js';
