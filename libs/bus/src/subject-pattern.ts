/**
 * NATS subject matching for the in-memory bus: `*` matches one token, `>` the rest (one or more).
 * A subject may itself hold wildcards (a subscriber's filter); they match only pattern wildcards.
 */
export function subjectMatches(pattern: string, subject: string): boolean {
  const patternTokens = pattern.split('.');
  const subjectTokens = subject.split('.');
  for (let index = 0; index < patternTokens.length; index += 1) {
    const token = patternTokens[index];
    if (token === '>') return subjectTokens.length > index;
    const subjectToken = subjectTokens[index];
    if (subjectToken === undefined) return false;
    if (token === '*') {
      if (subjectToken === '>') return false;
      continue;
    }
    if (token !== subjectToken) return false;
  }
  return patternTokens.length === subjectTokens.length;
}

/**
 * `subjectMatches` for one pattern, prepared once: a stream's wildcard and a durable's filter are
 * matched against every published event, and splitting both into tokens each time showed in the
 * embedded profile. A pattern without wildcards is a string comparison; one whose only wildcard is
 * a final `>` is a prefix test; any other is matched token by token as before.
 */
export function subjectMatcher(pattern: string): (subject: string) => boolean {
  const tokens = pattern.split('.');
  const wildcards = tokens.filter((token) => token === '*' || token === '>').length;
  if (wildcards === 0) return (subject) => subject === pattern;
  if (wildcards === 1 && tokens[tokens.length - 1] === '>') {
    // 'a.b.>' needs 'a.b.' and one more token or more (as subjectMatches counts them, an empty one too).
    const prefix = pattern.slice(0, -1);
    return (subject) => subject.startsWith(prefix);
  }
  return (subject) => subjectMatches(pattern, subject);
}
