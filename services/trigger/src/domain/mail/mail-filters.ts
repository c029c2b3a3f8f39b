/** Sender and subject filters of a mail trigger (spec mail rules 2-4). */

/** Splits a comma-separated filter into its trimmed, lower-cased, non-empty entries. */
export function parseFilterList(filter: string | undefined): string[] {
  if (!filter) return [];
  return filter
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter((entry) => entry !== '');
}

/** The bare address of a sender written as `Name <a@b>` or `a@b`, lower-cased. */
export function bareAddress(sender: string): string {
  const angled = /<([^<>]+)>\s*$/.exec(sender);
  return (angled ? angled[1]! : sender).trim().toLowerCase();
}

/** Rule 3: an address or a `*@domain` pattern matches; an empty list accepts every sender. */
export function senderMatches(sender: string, patterns: readonly string[]): boolean {
  if (patterns.length === 0) return true;
  const address = bareAddress(sender);
  const domain = address.slice(address.lastIndexOf('@') + 1);
  return patterns.some((pattern) =>
    pattern.startsWith('*@') ? address.includes('@') && domain === pattern.slice(2) : address === pattern,
  );
}

/** Rule 4: the subject contains any keyword, case-insensitively; an empty list accepts every subject. */
export function subjectMatches(subject: string, keywords: readonly string[]): boolean {
  if (keywords.length === 0) return true;
  const lower = subject.toLowerCase();
  return keywords.some((keyword) => lower.includes(keyword));
}

export interface MailFilters {
  senders: string[];
  keywords: string[];
}

export function mailFilters(senderFilter: string | undefined, subjectFilter: string | undefined): MailFilters {
  return { senders: parseFilterList(senderFilter), keywords: parseFilterList(subjectFilter) };
}

export function emailMatches(email: { sender: string; subject: string }, filters: MailFilters): boolean {
  return senderMatches(email.sender, filters.senders) && subjectMatches(email.subject, filters.keywords);
}
