/** A provider-neutral email, as both provider adapters hand it to the mail trigger. */

export interface MailAttachmentInfo {
  /** The provider's id of the attachment (for the download). */
  id: string;
  name: string;
  /** Bytes, as the provider reports them before any download. */
  size: number;
  contentType: string;
}

export interface MailMessage {
  id: string;
  threadId: string;
  sender: string;
  recipients: string[];
  cc: string[];
  subject: string;
  body: string;
  bodyHtml: string;
  /** When the provider received it, epoch milliseconds (Gmail internalDate, Graph receivedDateTime). */
  receivedAt: number;
  attachments: MailAttachmentInfo[];
}

/** The `{name, url, size}` of one stored attachment (spec: the attachments output). */
export interface StoredAttachment {
  name: string;
  /** `/api/v1/files/<key>`: downloadable with a key of the organization. */
  url: string;
  size: number;
  contentType: string;
}

/** One entry of the `thread` array (spec mail rule 9). */
export interface ThreadEntry {
  sender: string;
  recipients: string[];
  body: string;
  date: number;
}

/** The input node's output for one email (spec "Email output fields"). */
export interface EmailOutput {
  id: string;
  thread_id: string;
  sender: string;
  recipients: string[];
  cc: string[];
  subject: string;
  body: string;
  body_html: string;
  date: number;
  receiving_account: string;
  attachments: StoredAttachment[];
  thread?: ThreadEntry[];
}

/** Attachments the trigger downloads: those not over the size limit (rule 8). */
export function attachmentsToStore(message: MailMessage, maxBytes: number): MailAttachmentInfo[] {
  return message.attachments.filter((attachment) => attachment.size <= maxBytes);
}

export function threadEntry(message: MailMessage): ThreadEntry {
  return { sender: message.sender, recipients: message.recipients, body: message.body, date: message.receivedAt };
}

export function emailOutput(
  message: MailMessage,
  receivingAccount: string,
  attachments: StoredAttachment[],
  thread: MailMessage[] | undefined,
): EmailOutput {
  const output: EmailOutput = {
    id: message.id,
    thread_id: message.threadId,
    sender: message.sender,
    recipients: message.recipients,
    cc: message.cc,
    subject: message.subject,
    body: message.body,
    body_html: message.bodyHtml,
    date: message.receivedAt,
    receiving_account: receivingAccount,
    attachments,
  };
  if (thread) output.thread = [...thread].sort((a, b) => a.receivedAt - b.receivedAt).map(threadEntry);
  return output;
}
