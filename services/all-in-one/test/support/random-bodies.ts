/**
 * Seeded generators of hostile request bodies for the route fuzz test: values PostgreSQL's jsonb
 * refuses (NUL, lone surrogates), numbers JSON cannot round-trip, deep nesting, wrong types and
 * large strings. A seed makes every failure reproducible.
 */
export type Random = () => number;

/** mulberry32: small, fast and good enough to pick cases. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

const POISON_STRINGS = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\ud83d',
  '{{input["In"]["x"]}}',
  '{{'.repeat(50),
  '../../etc/passwd',
  "'; DROP TABLE events; --",
  '__proto__',
  '',
  ' ',
  'x'.repeat(70_000),
  '2026-13-45T99:99:99Z',
  '-1',
  'NaN',
];

const POISON_NUMBERS = [0, -1, 1.5, 2 ** 31, 2 ** 53 + 1, -(2 ** 63), 1e308, -1e-308, Number.MAX_SAFE_INTEGER];

/** A random JSON-able value, at most `depth` levels deep. */
export function randomValue(random: Random, depth = 3): unknown {
  const roll = random();
  if (depth <= 0 || roll < 0.35) return pick(random, POISON_STRINGS);
  if (roll < 0.5) return pick(random, POISON_NUMBERS);
  if (roll < 0.58) return pick(random, [true, false, null]);
  if (roll < 0.75) return Array.from({ length: Math.floor(random() * 4) }, () => randomValue(random, depth - 1));
  const object: Record<string, unknown> = {};
  for (let i = Math.floor(random() * 4); i > 0; i--)
    object[pick(random, POISON_STRINGS).slice(0, 20)] = randomValue(random, depth - 1);
  return object;
}

/** An object with the schema's property names (so validation goes deeper) and hostile values. */
export function randomObjectFor(random: Random, properties: readonly string[]): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const name of properties) if (random() < 0.7) body[name] = randomValue(random, 2);
  if (random() < 0.3) body[pick(random, POISON_STRINGS).slice(0, 20)] = randomValue(random, 1);
  return body;
}

/** Raw texts that are not what a JSON parser expects, or JSON that nests or grows without bound. */
export function randomRawBody(random: Random): string {
  return pick(random, [
    '{',
    'null',
    '"just a string"',
    '[1,2,',
    '{"a":1e999}',
    '{"a":-1e999}',
    '{"a":"\\u0000"}',
    '{"a":"\\ud800"}',
    '{"\\u0000":1}',
    '{"__proto__":{"polluted":true}}',
    '{"constructor":{"prototype":{"polluted":true}}}',
    '['.repeat(200) + ']'.repeat(200),
    '{"a":'.repeat(150) + '1' + '}'.repeat(150),
    `{"a":"${'\\u0000'.repeat(1000)}"}`,
    '\u0000',
    '{"a":1,"a":2}',
  ]);
}
