import { randomBytes } from 'node:crypto';

/** One attachment of a fake email. */
export interface FakeAttachment {
  filename: string;
  mimeType: string;
  content: Buffer;
}

/** A fake email as both provider servers serve it. */
export interface FakeEmail {
  id: string;
  threadId: string;
  /** Epoch ms the provider received it. */
  receivedAt: number;
  from: { name?: string; address: string };
  to: string[];
  cc: string[];
  subject: string;
  text: string;
  html: string;
  attachments: (FakeAttachment & { id: string })[];
  /** Folder display name (Graph) or label (Gmail: INBOX). */
  folder: string;
}

export type NewFakeEmail = Partial<Omit<FakeEmail, 'id' | 'attachments' | 'from'>> & {
  from: string | { name?: string; address: string };
  attachments?: FakeAttachment[];
  /** Start a new thread unless given. */
  threadId?: string;
};

/** The mail of every account the fake providers know; shared by the Gmail and Graph servers. */
export class FakeMailboxes {
  private readonly byAccount = new Map<string, FakeEmail[]>();
  private sequence = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** Delivers an email into `account` and answers it (ids rise with delivery, like Gmail's). */
  deliver(account: string, email: NewFakeEmail): FakeEmail {
    this.sequence += 1;
    const id = `${this.sequence.toString(16).padStart(12, '0')}${randomBytes(2).toString('hex')}`;
    const from = typeof email.from === 'string' ? { address: email.from } : email.from;
    const stored: FakeEmail = {
      id,
      threadId: email.threadId ?? `t${id}`,
      receivedAt: email.receivedAt ?? this.now(),
      from,
      to: email.to ?? [account],
      cc: email.cc ?? [],
      subject: email.subject ?? '',
      text: email.text ?? '',
      html: email.html ?? '',
      attachments: (email.attachments ?? []).map((attachment, index) => ({ ...attachment, id: `a${index}-${id}` })),
      folder: email.folder ?? 'Inbox',
    };
    this.list(account).push(stored);
    return stored;
  }

  list(account: string): FakeEmail[] {
    const key = account.toLowerCase();
    let emails = this.byAccount.get(key);
    if (!emails) {
      emails = [];
      this.byAccount.set(key, emails);
    }
    return emails;
  }

  /** Deletes an email (the user emptied it from the trash). */
  remove(account: string, id: string): void {
    const emails = this.list(account);
    const index = emails.findIndex((email) => email.id === id);
    if (index >= 0) emails.splice(index, 1);
  }

  find(account: string, id: string): FakeEmail | undefined {
    return this.list(account).find((email) => email.id === id);
  }
}
