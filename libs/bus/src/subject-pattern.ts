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
