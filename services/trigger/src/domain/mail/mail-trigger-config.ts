import { mailFilters, type MailFilters } from './mail-filters.js';

/** The fields of a gmail or outlook input node the poller uses (spec "Mail trigger A configuration"). */
export interface MailTriggerConfig {
  provider: 'gmail' | 'outlook';
  pollingIntervalMs: number;
  auth:
    | { method: 'oauth'; connectionId: string }
    | { method: 'service_account'; serviceAccountId: string; impersonationEmail: string };
  filters: MailFilters;
  includeThread: boolean;
  /** Bytes; attachments larger are skipped (rule 8). */
  attachmentMaxSize: number;
  /** Outlook: the shared mailbox address, when not the signed-in user's own. */
  sharedMailbox?: string;
  /** Outlook: folder display names; default the inbox. */
  folders: string[];
}

export const DEFAULT_POLLING_INTERVAL_SECONDS = 30;

export class MailConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MailConfigError';
  }
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;

/**
 * Reads a mail input node's config. `attachmentCapBytes` is the host's ceiling: a node may ask
 * for less, never more, so no email makes the trigger hold more than the cap in memory.
 */
export function parseMailTriggerConfig(config: Record<string, unknown>, attachmentCapBytes: number): MailTriggerConfig {
  const provider = config.triggerType;
  if (provider !== 'gmail' && provider !== 'outlook') throw new MailConfigError('triggerType must be gmail or outlook');
  const seconds = config.pollingInterval ?? DEFAULT_POLLING_INTERVAL_SECONDS;
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 1) {
    throw new MailConfigError('pollingInterval must be at least 1 second');
  }
  const method = config.authMethod ?? 'oauth';
  let auth: MailTriggerConfig['auth'];
  if (method === 'service_account' && provider === 'gmail') {
    const serviceAccountId = text(config.serviceAccountId);
    const impersonationEmail = text(config.impersonationEmail);
    if (!serviceAccountId || !impersonationEmail) {
      throw new MailConfigError('authMethod service_account needs serviceAccountId and impersonationEmail');
    }
    auth = { method: 'service_account', serviceAccountId, impersonationEmail: impersonationEmail.toLowerCase() };
  } else if (method === 'oauth') {
    const connectionId = text(config.connectionId);
    if (!connectionId) throw new MailConfigError('authMethod oauth needs connectionId');
    auth = { method: 'oauth', connectionId };
  } else {
    throw new MailConfigError(`authMethod ${JSON.stringify(method)} is not supported by ${provider}`);
  }
  const requested = config.attachmentMaxSize;
  const attachmentMaxSize =
    typeof requested === 'number' && Number.isFinite(requested) && requested >= 0
      ? Math.min(requested, attachmentCapBytes)
      : attachmentCapBytes;
  const folders = Array.isArray(config.folders)
    ? config.folders.filter((folder): folder is string => typeof folder === 'string' && folder.trim() !== '')
    : [];
  return {
    provider,
    pollingIntervalMs: Math.round(seconds * 1000),
    auth,
    filters: mailFilters(text(config.senderFilter), text(config.subjectFilter)),
    includeThread: config.includeThread === true,
    attachmentMaxSize,
    ...(provider === 'outlook' && text(config.sharedMailbox) ? { sharedMailbox: text(config.sharedMailbox)! } : {}),
    folders: provider === 'outlook' ? folders : [],
  };
}
