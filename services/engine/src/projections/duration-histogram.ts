import { sql, type RawBuilder } from 'kysely';

/**
 * Execution durations per process as a histogram with fixed buckets (HdrHistogram's layout), so
 * a percentile reads a few hundred rows instead of sorting every execution of the process.
 * Buckets 0..127 hold exactly that many milliseconds; above, each power of two is split into 64
 * buckets, so a bucket spans less than 1/64 of its lower bound and its midpoint is within 1/128
 * (0.8 %) of every duration in it, from 128 ms up to years. Integer arithmetic only: the engine
 * (JavaScript) and the backfill (SQL) put every duration into the same bucket.
 */
const SUB_BUCKET_BITS = 6;
const EXACT_BITS = SUB_BUCKET_BITS + 1;

/** The bucket of a duration; a negative one (clocks set back between engines) counts as 0 ms. */
export function durationBucket(durationMs: number): number {
  const value = Math.max(0, Math.trunc(durationMs));
  const shift = Math.max(0, value.toString(2).length - EXACT_BITS);
  return shift * 2 ** SUB_BUCKET_BITS + Math.floor(value / 2 ** shift);
}

/** The same bucket in SQL, for a bigint expression (bit length from its 64-bit text form). */
export const durationBucketSql = (durationMs: RawBuilder<unknown>): RawBuilder<number> => {
  const value = sql`greatest(${durationMs}, 0)`;
  const shift = sql`greatest(length(ltrim(${value}::bit(64)::text, '0')) - ${sql.lit(EXACT_BITS)}, 0)`;
  return sql<number>`(${shift} * ${sql.lit(2 ** SUB_BUCKET_BITS)} + (${value} >> ${shift}))::integer`;
};

/** The duration a bucket stands for: its exact value below 128 ms, else the midpoint of its range. */
export function bucketValue(bucket: number): number {
  if (bucket < 2 ** EXACT_BITS) return bucket;
  const shift = Math.floor(bucket / 2 ** SUB_BUCKET_BITS) - 1;
  const low = (bucket - shift * 2 ** SUB_BUCKET_BITS) * 2 ** shift;
  return low + (2 ** shift - 1) / 2;
}

/**
 * percentile_cont over the durations the buckets stand for (`buckets` ascending, `counts` of
 * each): the same ranks and the same interpolation between them, so it is exact while those two
 * durations are below 128 ms. Null without durations.
 */
export function histogramPercentile(
  buckets: readonly number[],
  counts: readonly number[],
  fraction: number,
): number | null {
  const total = counts.reduce((sum, count) => sum + count, 0);
  if (total === 0) return null;
  const rank = fraction * (total - 1);
  const valueAt = (index: number): number => {
    let seen = 0;
    for (const [i, count] of counts.entries()) {
      seen += count;
      if (seen > index) return bucketValue(buckets[i] as number);
    }
    return bucketValue(buckets[buckets.length - 1] as number);
  };
  const lower = valueAt(Math.floor(rank));
  return rank === Math.floor(rank) ? lower : lower + (rank - Math.floor(rank)) * (valueAt(Math.ceil(rank)) - lower);
}
