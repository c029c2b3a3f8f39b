import { parseAddressList } from '../src/domain/mail/address-list.js';
import { impersonationAllowed } from '../src/domain/mail/impersonation.js';
import {
  mailFilters,
  emailMatches,
  senderMatches,
  subjectMatches,
  parseFilterList,
} from '../src/domain/mail/mail-filters.js';
import { attachmentsToStore, emailOutput, type MailMessage } from '../src/domain/mail/mail-message.js';
import { MailConfigError, parseMailTriggerConfig } from '../src/domain/mail/mail-trigger-config.js';
import { nextPollDelay } from '../src/domain/mail/poll-backoff.js';

describe('mail rule 3: sender filter', () => {
  it.each([
    ['', 'anyone@x.test', true],
    ['a@x.test', 'A@X.test', true],
    ['a@x.test', 'Jane <a@x.test>', true],
    ['a@x.test', 'b@x.test', false],
    ['*@x.test', 'b@x.test', true],
    ['*@x.test', 'b@sub.x.test', false],
    ['*@x.test', 'b@evilx.test', false],
    ['*@x.test, boss@y.test', 'boss@y.test', true],
    [' , ', 'anyone@x.test', true],
  ])('filter %j and sender %j -> %s', (filter, sender, expected) => {
    expect(senderMatches(sender, parseFilterList(filter))).toBe(expected);
  });
});

describe('mail rule 4: subject filter', () => {
  it.each([
    ['', 'whatever', true],
    ['invoice', 'Your INVOICE #4', true],
    ['invoice, order', 'New order placed', true],
    ['invoice, order', 'Hello', false],
    ['in voice', 'in voice mail', true],
  ])('filter %j and subject %j -> %s', (filter, subject, expected) => {
    expect(subjectMatches(subject, parseFilterList(filter))).toBe(expected);
  });

  it('rule 2: an email must pass both filters', () => {
    const filters = mailFilters('*@acme.test', 'invoice');
    expect(emailMatches({ sender: 'a@acme.test', subject: 'Invoice' }, filters)).toBe(true);
    expect(emailMatches({ sender: 'a@other.test', subject: 'Invoice' }, filters)).toBe(false);
    expect(emailMatches({ sender: 'a@acme.test', subject: 'Hi' }, filters)).toBe(false);
  });
});

describe('mail rules 5 and 6: backoff', () => {
  const settings = { initialMs: 30_000, maxMs: 300_000 };

  it('doubles while polls stay empty, up to 5 minutes', () => {
    expect([1, 2, 3, 4, 5, 6, 50].map((empty) => nextPollDelay(empty, settings))).toEqual([
      30_000, 60_000, 120_000, 240_000, 300_000, 300_000, 300_000,
    ]);
  });

  it('returns to the polling interval when emails arrive', () => {
    expect(nextPollDelay(0, settings)).toBe(30_000);
  });

  it('never polls before a Retry-After', () => {
    expect(nextPollDelay(1, settings, 90_000)).toBe(90_000);
    expect(nextPollDelay(5, settings, 1_000)).toBe(300_000);
  });

  it('an interval above the ceiling is kept as is', () => {
    expect(nextPollDelay(3, { initialMs: 600_000, maxMs: 300_000 })).toBe(600_000);
  });
});

describe('email output', () => {
  const message: MailMessage = {
    id: 'm1',
    threadId: 't1',
    sender: 'a@x.test',
    recipients: ['me@x.test'],
    cc: [],
    subject: 'Hi',
    body: 'text',
    bodyHtml: '<p>text</p>',
    receivedAt: 1_795_424_404_100,
    attachments: [
      { id: '1', name: 'small', size: 10, contentType: 'text/plain' },
      { id: '2', name: 'exact', size: 100, contentType: 'text/plain' },
      { id: '3', name: 'big', size: 101, contentType: 'text/plain' },
    ],
  };

  it('rule 8: attachments over attachmentMaxSize are skipped', () => {
    expect(attachmentsToStore(message, 100).map((attachment) => attachment.name)).toEqual(['small', 'exact']);
  });

  it('maps the spec fields; date in epoch ms; thread entries oldest first (rule 9)', () => {
    const reply = { ...message, id: 'm0', sender: 'b@x.test', body: 'first', receivedAt: 1_000 };
    expect(emailOutput(message, 'me@x.test', [], [message, reply])).toEqual({
      id: 'm1',
      thread_id: 't1',
      sender: 'a@x.test',
      recipients: ['me@x.test'],
      cc: [],
      subject: 'Hi',
      body: 'text',
      body_html: '<p>text</p>',
      date: 1_795_424_404_100,
      receiving_account: 'me@x.test',
      attachments: [],
      thread: [
        { sender: 'b@x.test', recipients: ['me@x.test'], body: 'first', date: 1_000 },
        { sender: 'a@x.test', recipients: ['me@x.test'], body: 'text', date: 1_795_424_404_100 },
      ],
    });
    expect(emailOutput(message, 'me@x.test', [], undefined)).not.toHaveProperty('thread');
  });
});

describe('address lists', () => {
  it('splits on commas outside quotes and angle brackets', () => {
    expect(parseAddressList('"Doe, Jane" <Jane@X.test>, b@x.test,<c@x.test>')).toEqual([
      'jane@x.test',
      'b@x.test',
      'c@x.test',
    ]);
    expect(parseAddressList(undefined)).toEqual([]);
  });
});

describe('service-account impersonation', () => {
  it.each([
    ['boss@acme.test', ['boss@acme.test'], true],
    ['Boss@Acme.test', ['*@acme.test'], true],
    ['boss@evil.test', ['*@acme.test'], false],
    ['boss@sub.acme.test', ['*@acme.test'], false],
    ['boss@acme.test', [], false],
    ['@acme.test', ['*@acme.test'], false],
  ])('%s with %j -> %s', (target, allowed, expected) => {
    expect(impersonationAllowed(target, allowed)).toBe(expected);
  });
});

describe('mail trigger config', () => {
  it('pollingInterval defaults to 30 s and must be at least 1 s', () => {
    expect(parseMailTriggerConfig({ triggerType: 'gmail', connectionId: 'c' }, 100).pollingIntervalMs).toBe(30_000);
    expect(() =>
      parseMailTriggerConfig({ triggerType: 'gmail', connectionId: 'c', pollingInterval: 0.5 }, 100),
    ).toThrow(MailConfigError);
  });

  it('caps attachmentMaxSize at the host ceiling', () => {
    expect(
      parseMailTriggerConfig({ triggerType: 'gmail', connectionId: 'c', attachmentMaxSize: 1e12 }, 100)
        .attachmentMaxSize,
    ).toBe(100);
    expect(
      parseMailTriggerConfig({ triggerType: 'gmail', connectionId: 'c', attachmentMaxSize: 10 }, 100).attachmentMaxSize,
    ).toBe(10);
  });

  it('outlook takes oauth only, with a shared mailbox and folders', () => {
    expect(() =>
      parseMailTriggerConfig(
        { triggerType: 'outlook', authMethod: 'service_account', serviceAccountId: 's', impersonationEmail: 'a@b' },
        1,
      ),
    ).toThrow(MailConfigError);
    expect(
      parseMailTriggerConfig(
        { triggerType: 'outlook', connectionId: 'c', sharedMailbox: 'team@x.test', folders: ['Invoices', 3] },
        1,
      ),
    ).toMatchObject({ sharedMailbox: 'team@x.test', folders: ['Invoices'] });
  });

  it('service_account needs the account and the address', () => {
    expect(() =>
      parseMailTriggerConfig({ triggerType: 'gmail', authMethod: 'service_account', serviceAccountId: 's' }, 1),
    ).toThrow(/impersonationEmail/);
  });
});
