import type { WeftConfig } from '@weft/config';
import type { MailListenerOptions } from './mail-listener-factories.js';

/** The mail listeners' options from the WEFT_* configuration (provider endpoints and WEFT_MAIL_* limits). */
export function mailListenerOptions(config: WeftConfig): MailListenerOptions {
  const { providers, mail } = config;
  return {
    ...(providers.gmailApiUrl ? { gmailApiUrl: providers.gmailApiUrl } : {}),
    ...(providers.graphApiUrl ? { graphApiUrl: providers.graphApiUrl } : {}),
    ...(providers.googleTokenUrl ? { googleTokenUrl: providers.googleTokenUrl } : {}),
    ...(providers.microsoftTokenUrl ? { microsoftTokenUrl: providers.microsoftTokenUrl } : {}),
    maxPollIntervalMs: mail.maxPollIntervalSeconds * 1000,
    pollOverlapMs: mail.pollOverlapSeconds * 1000,
    claimLeaseMs: mail.claimLeaseSeconds * 1000,
    attachmentMaxBytes: mail.attachmentMaxBytes,
    pageSize: mail.pageSize,
  };
}
