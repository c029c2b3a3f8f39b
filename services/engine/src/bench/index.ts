/** What benchmarks of other packages share with the engine's (`@weft/engine/bench`). */
export { runLoad, type LoadResult } from './load-loop.js';
export { ms, percentile, printTable, timeOneAtATime } from './latency-stats.js';
export { seedStatsHistory } from './stats-history-seed.js';
