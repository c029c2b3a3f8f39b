/**
 * What the script sandbox remembers of each script's runs called at once, per organization and
 * code, outside its isolates: a script sent to the queue stays there when its isolate is replaced
 * (a memory kill, a reset, a larger memoryMb) or its compiled scripts are dropped.
 */
export interface AtOnceRecord {
  /** Runs at once so far (the first ones warm the script up: see WARM_UP_RUNS). */
  runs: number;
  /** Grows by 1 with each slow run at once and shrinks by 0.1 with each fast one (see `noteRun`). */
  slowness: number;
  /** Its runs are queued from now on. */
  queuedOnly: boolean;
}

/** Slowness at which a script's runs are queued from then on: about three slow runs in ten. */
const MAX_SLOWNESS = 3;
/**
 * Runs at once not counted as slow: a script's first calls in a realm compile its code and warm
 * up its inline caches (measured: the benchmark's two scripts were slow three times in their first
 * runs, and fast from then on).
 */
const WARM_UP_RUNS = 20;
/** Scripts remembered in all; past it the records start afresh (each new script is tried once anyway). */
const MAX_RECORDS = 10_000;

export class AtOnceRecords {
  private readonly byOrganization = new Map<string, Map<string, AtOnceRecord>>();
  private size = 0;

  /** The script's record, made on first use. */
  of(organizationId: string, code: string): AtOnceRecord {
    let scripts = this.byOrganization.get(organizationId);
    if (!scripts) this.byOrganization.set(organizationId, (scripts = new Map()));
    let record = scripts.get(code);
    if (!record) {
      if (this.size >= MAX_RECORDS) {
        this.byOrganization.clear();
        this.size = 0;
        this.byOrganization.set(organizationId, scripts);
        scripts.clear();
      }
      scripts.set(code, (record = { runs: 0, slowness: 0, queuedOnly: false }));
      this.size += 1;
    }
    return record;
  }

  /**
   * Counts a run at once: a fast one pays back a tenth of a slow one, so a collection in the
   * isolate now and then is forgiven, and a script slow every other run is queued after four.
   */
  noteRun(record: AtOnceRecord, slow: boolean): void {
    record.runs += 1;
    if (record.runs <= WARM_UP_RUNS) return;
    record.slowness = slow ? record.slowness + 1 : Math.max(0, record.slowness - 0.1);
    if (record.slowness >= MAX_SLOWNESS) record.queuedOnly = true;
  }
}
