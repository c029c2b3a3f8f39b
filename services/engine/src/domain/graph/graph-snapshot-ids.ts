import { createHash } from 'node:crypto';
import { isDeepFrozen } from './deep-freeze.js';

/**
 * The key of a graph snapshot in `engine_graph_snapshots`: the SHA-256 (base64url) of its
 * canonical JSON text, keys sorted, so the graph as the engine ran it and as a rebuild reads it
 * back from jsonb (keys in another order) get the same key. Every execution of one process
 * revision carries the same graph, so its execution rows share one stored snapshot instead of a
 * copy each (about 1 KB per run, parsed as jsonb and compressed by PostgreSQL at every commit).
 * Cached per deep-frozen object: a revision's runs carry the very same snapshot object.
 */
const ids = new WeakMap<object, string>();

export function graphSnapshotId(snapshot: object): string {
  const known = ids.get(snapshot);
  if (known !== undefined) return known;
  const id = createHash('sha256').update(canonicalJson(snapshot)).digest('base64url');
  // Kept only for a snapshot nothing can change (a revision's, `snapshotOf`).
  if (isDeepFrozen(snapshot)) ids.set(snapshot, id);
  return id;
}

/** JSON text with every object's keys in code-unit order (what JSON.stringify leaves out, left out too). */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(',')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  const record = value as Record<string, unknown>;
  if (typeof record.toJSON === 'function') return canonicalJson((record.toJSON as () => unknown)());
  const members: string[] = [];
  for (const key of Object.keys(record).sort()) {
    const member = record[key];
    if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
    members.push(`${JSON.stringify(key)}:${canonicalJson(member)}`);
  }
  return `{${members.join(',')}}`;
}

const bytesOfFrozen = new WeakMap<object, number>();

/** Bytes of the snapshot's JSON; measured once per deep-frozen snapshot (a revision's, shared by its runs). */
export function graphSnapshotBytes(snapshot: object): number {
  const known = bytesOfFrozen.get(snapshot);
  if (known !== undefined) return known;
  const bytes = Buffer.byteLength(JSON.stringify(snapshot));
  if (isDeepFrozen(snapshot)) bytesOfFrozen.set(snapshot, bytes);
  return bytes;
}
