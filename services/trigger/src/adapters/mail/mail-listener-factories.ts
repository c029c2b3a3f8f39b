import type { ListenerContext, ListenerFactory } from '../../application/listener-port.js';
import type { Clock } from '../../application/clock.js';
import { parseMailTriggerConfig } from '../../domain/mail/mail-trigger-config.js';
import { DEFAULT_GMAIL_API_URL, GmailMailboxClient } from './gmail-mailbox-client.js';
import { DEFAULT_GOOGLE_TOKEN_URL, gmailOAuthClient, gmailServiceAccountClient } from './google-auth.js';
import { DEFAULT_GRAPH_API_URL, GraphMailboxClient } from './graph-mailbox-client.js';
import { MailListener } from './mail-listener.js';
import { DEFAULT_MICROSOFT_TOKEN_URL, MicrosoftTokenSource } from './microsoft-token-source.js';

/** Provider endpoints (WEFT_GMAIL_API_URL ...; config `providers`) and poll settings (WEFT_MAIL_*). */
export interface MailListenerOptions {
  gmailApiUrl?: string;
  graphApiUrl?: string;
  googleTokenUrl?: string;
  /** May hold `<tenant>`, replaced by the connection's tenantId (default `common`). */
  microsoftTokenUrl?: string;
  /** Ceiling of the backoff; default 5 minutes (spec). */
  maxPollIntervalMs?: number;
  /** How far before the last poll each query reaches; default 5 minutes. */
  pollOverlapMs?: number;
  /** How long a claimed email may stay unstarted before it is fired again; default 2 minutes. */
  claimLeaseMs?: number;
  /** Host ceiling for `attachmentMaxSize`, bytes; default 25 MiB. */
  attachmentMaxBytes?: number;
  /** Messages per provider listing page; default 100. */
  pageSize?: number;
  clock?: Clock;
}

export const MAIL_DEFAULTS = {
  maxPollIntervalMs: 5 * 60_000,
  pollOverlapMs: 5 * 60_000,
  claimLeaseMs: 2 * 60_000,
  attachmentMaxBytes: 25 * 1024 * 1024,
  pageSize: 100,
} as const;

function listenerFor(
  context: ListenerContext,
  options: MailListenerOptions,
  provider: 'gmail' | 'outlook',
): MailListener {
  const attachmentCap = options.attachmentMaxBytes ?? MAIL_DEFAULTS.attachmentMaxBytes;
  const config = parseMailTriggerConfig({ ...context.config, triggerType: provider }, attachmentCap);
  const now = (): number => (options.clock ?? context).now().getTime();
  const pageSize = options.pageSize ?? MAIL_DEFAULTS.pageSize;
  const connect = async () => {
    if (config.provider === 'gmail') {
      const tokenUrl = options.googleTokenUrl ?? DEFAULT_GOOGLE_TOKEN_URL;
      const apiUrl = options.gmailApiUrl ?? DEFAULT_GMAIL_API_URL;
      if (config.auth.method === 'service_account') {
        const auth = await gmailServiceAccountClient(context, config.auth, tokenUrl);
        return GmailMailboxClient.open({ auth, apiUrl, impersonated: config.auth.impersonationEmail, pageSize, now });
      }
      const auth = await gmailOAuthClient(context, config.auth.connectionId, tokenUrl);
      return GmailMailboxClient.open({ auth, apiUrl, pageSize, now });
    }
    if (config.auth.method !== 'oauth') throw new Error('outlook accepts authMethod oauth only');
    const tokens = await MicrosoftTokenSource.open(
      context,
      config.auth.connectionId,
      options.microsoftTokenUrl ?? DEFAULT_MICROSOFT_TOKEN_URL,
      now,
    );
    return GraphMailboxClient.open({
      tokens,
      apiUrl: options.graphApiUrl ?? DEFAULT_GRAPH_API_URL,
      ...(config.sharedMailbox ? { sharedMailbox: config.sharedMailbox } : {}),
      folders: config.folders,
      pageSize,
      now,
    });
  };
  return new MailListener(context, config, connect, {
    maxPollIntervalMs: options.maxPollIntervalMs ?? MAIL_DEFAULTS.maxPollIntervalMs,
    overlapMs: options.pollOverlapMs ?? MAIL_DEFAULTS.pollOverlapMs,
    claimLeaseMs: options.claimLeaseMs ?? MAIL_DEFAULTS.claimLeaseMs,
    ...(options.clock ? { clock: options.clock } : {}),
  });
}

/** Mail trigger A (Gmail API) for input nodes with `triggerType: gmail`. */
export const gmailListenerFactory =
  (options: MailListenerOptions = {}): ListenerFactory =>
  (context) =>
    listenerFor(context, options, 'gmail');

/** Mail trigger B (Microsoft Graph) for input nodes with `triggerType: outlook`. */
export const outlookListenerFactory =
  (options: MailListenerOptions = {}): ListenerFactory =>
  (context) =>
    listenerFor(context, options, 'outlook');
