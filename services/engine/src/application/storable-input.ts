import { badRequest } from '@weft/contracts';
import { unstorableStrings } from '../domain/graph/json-value.js';

/**
 * Execution input is stored as jsonb, which refuses U+0000 and lone surrogates that JSON allows:
 * such input is a 400 naming every place, before anything is queued or stored.
 */
export function assertStorableInput(value: unknown, what = 'input'): void {
  const found = unstorableStrings(value);
  if (found.length === 0) return;
  throw badRequest(
    `the ${what} holds values that cannot be stored`,
    found.map(({ path, reason, inKey }) => ({
      path,
      message: inKey ? `the name must not contain ${reason}` : `must not contain ${reason}`,
    })),
  );
}
