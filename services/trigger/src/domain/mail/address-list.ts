import { bareAddress } from './mail-filters.js';

/**
 * The bare addresses of an address-list header (`To`, `Cc`): commas inside quoted names or angle
 * brackets do not split (`"Doe, Jane" <jane@x>`).
 */
export function parseAddressList(header: string | undefined): string[] {
  if (!header) return [];
  const entries: string[] = [];
  let current = '';
  let quoted = false;
  let angled = false;
  for (const char of header) {
    if (char === '"') quoted = !quoted;
    else if (char === '<' && !quoted) angled = true;
    else if (char === '>' && !quoted) angled = false;
    if (char === ',' && !quoted && !angled) {
      entries.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  entries.push(current);
  return entries.map((entry) => bareAddress(entry)).filter((address) => address !== '');
}
