import { resolve } from 'node:path';

/**
 * All configuration comes from WEFT_* environment variables (DESIGN.md, "Fixed decisions").
 * Embedded mode is chosen when no database / NATS URL is given.
 */
export interface WeftConfig {
  port: number;
  host: string;
  dataDir: string;
  /** PostgreSQL URL; absent means the embedded PostgreSQL in `dataDir` (docs/decisions/0005-durable-embedded-store.md). */
  databaseUrl?: string;
  /** Longest waits for the embedded PostgreSQL to start (incl. initdb) and to stop, in ms. */
  embeddedPostgres: { startTimeoutMs: number; stopTimeoutMs: number };
  /** NATS URL; absent means the in-memory bus. */
  natsUrl?: string;
  /** This service's NATS credentials and TLS (infra/README.md: one user per service). */
  nats: NatsConnectionConfig;
  bootstrapApiKey?: string;
  secretKey?: string;
  /** Largest accepted HTTP body, in bytes. */
  bodyLimitBytes: number;
  /** Largest request, reply or work message on the bus, in bytes; larger ones get a 413 (WEFT_BUS_MAX_MESSAGE_BYTES). */
  busMaxMessageBytes: number;
  /** PostgreSQL timeouts and TCP keepalive (docs/event-store.md), in ms; 0 turns a server-side one off. */
  databaseTimeouts: {
    statementMs: number;
    lockMs: number;
    idleInTransactionMs: number;
    keepAliveMs: number;
    sessionMs: number;
  };
  /** What one engine takes on (docs/engine.md, "Limits"). */
  engineLimits: {
    /** Executions running at once (started, waiting or resumed); more requests stay queued. */
    maxRunningExecutions: number;
    /** Failed deliveries of an execution request before it is recorded as failed / dead-lettered. */
    executionMaxDeliver: number;
    /** Largest script node memoryMb. */
    scriptMaxMemoryMb: number;
    /** Warm script isolates kept (one per organization); the least recently used idle one goes first. */
    scriptMaxWarmIsolates: number;
    /** Runs of one organization's scripts on its isolate at once (WEFT_SCRIPT_RUNS_PER_ISOLATE). */
    scriptRunsPerIsolate: number;
    /** Sum of the memory limits of all live script isolates. */
    scriptMemoryBudgetMb: number;
  };
  outboundBlockPrivate: boolean;
  /** Size limits of execution events and of the published event stream (docs/engine.md). */
  events: EventLimitsConfig;
  /** Resumes, parked waits and error-webhook delivery of the engine (docs/engine.md, Durability). */
  engineDurability: EngineDurabilityConfig;
  /** Largest response body an integration node reads, in bytes. */
  httpResponseMaxBytes: number;
  /** ML model and schematization nodes (docs/engine.md, "AI nodes"). */
  models: ModelNodeLimits;
  /** Largest a node's config may grow with its templates resolved, in bytes of JSON; the node fails past it. */
  nodeConfigMaxBytes: number;
  /** Files, OCR and browser nodes (docs/engine.md, "Files, OCR and web automation"). */
  mediaNodes: MediaNodeLimits;
  s3?: { endpoint?: string; region: string; bucket: string; accessKeyId?: string; secretAccessKey?: string };
  /** Webhook and listener limits of the trigger service (docs/triggers.md). */
  triggers: TriggerConfig;
  /** Test runs and batches of the testing service (docs/testing.md). */
  testing: TestingConfig;
  providers: {
    gmailApiUrl?: string;
    graphApiUrl?: string;
    googleTokenUrl?: string;
    microsoftTokenUrl?: string;
    /** Consent pages of the OAuth code flow (WEFT_GOOGLE_AUTH_URL, WEFT_MICROSOFT_AUTH_URL; `<tenant>` replaced). */
    googleAuthUrl?: string;
    microsoftAuthUrl?: string;
  };
  /** Mail trigger polling limits (docs/triggers.md, "Mail triggers"). */
  mail: MailTriggerLimits;
}

export interface TriggerConfig {
  /** Longest a synchronous webhook waits for its execution before answering 202 (WEFT_WEBHOOK_MAX_WAIT_SECONDS). */
  webhookMaxWaitSeconds: number;
  /** Files one multipart webhook request may carry (WEFT_WEBHOOK_MAX_FILES). */
  webhookMaxFiles: number;
  /** Largest file of a multipart webhook request, in bytes (WEFT_WEBHOOK_FILE_MAX_BYTES). */
  webhookFileMaxBytes: number;
  /** How often each trigger replica compares its listeners with the running processes (WEFT_TRIGGER_RESYNC_SECONDS). */
  resyncSeconds: number;
  /** Names this replica's durable subscription to process events; default the host name (WEFT_TRIGGER_REPLICA_ID). */
  replicaId?: string;
}

export interface MailTriggerLimits {
  /** Host ceiling of a node's attachmentMaxSize, bytes (WEFT_MAIL_ATTACHMENT_MAX_BYTES). */
  attachmentMaxBytes: number;
  /** Longest wait between polls under backoff (WEFT_MAIL_MAX_POLL_INTERVAL_SECONDS; spec: 5 minutes). */
  maxPollIntervalSeconds: number;
  /** How far before the last poll each provider query reaches (WEFT_MAIL_POLL_OVERLAP_SECONDS). */
  pollOverlapSeconds: number;
  /** How long a claimed email may stay unstarted before any replica fires it again (WEFT_MAIL_CLAIM_LEASE_SECONDS). */
  claimLeaseSeconds: number;
  /** Messages per provider listing page (WEFT_MAIL_PAGE_SIZE). */
  pageSize: number;
  /** How long an OAuth consent started from the API may take to come back (WEFT_OAUTH_STATE_TTL_SECONDS). */
  oauthStateTtlSeconds: number;
  /** OAuth consents in flight per organization (WEFT_OAUTH_MAX_PENDING_CONSENTS). */
  oauthMaxPendingConsents: number;
}

export interface TestingConfig {
  /** Longest a test run waits for its execution before it is `timeout` (WEFT_TESTING_RUN_TIMEOUT_SECONDS). */
  runTimeoutSeconds: number;
  /** Test runs of one batch in flight at once; 1 runs them in sequence (WEFT_TESTING_BATCH_CONCURRENCY). */
  batchConcurrency: number;
  /** Most test cases one batch may run (WEFT_TESTING_BATCH_MAX_CASES). */
  batchMaxCases: number;
  /** Longest POST /test-runs/batch waits before answering 202 with the progress (WEFT_TESTING_BATCH_WAIT_SECONDS). */
  batchWaitSeconds: number;
  /** Violations a test run keeps; the rest are counted in omittedErrors (WEFT_TESTING_MAX_VIOLATIONS). */
  maxViolations: number;
}

export interface NatsConnectionConfig {
  user?: string;
  password?: string;
  /** A .creds file (JWT and nkey seed), instead of user and password. */
  credsFile?: string;
  /** TLS to the server: verified against `caFile` (else the system CAs), with a client certificate when given. */
  tls?: { caFile?: string; certFile?: string; keyFile?: string };
}

export interface EngineDurabilityConfig {
  /** Resumes without progress before an execution fails (WEFT_ENGINE_MAX_RESUMES). */
  maxResumes: number;
  /** Waits at least this long leave the engine's memory until due (WEFT_WAIT_PARK_AFTER_SECONDS). */
  parkAfterSeconds: number;
  /** Parked waits read per scan (WEFT_PARKED_WAKE_BATCH). */
  wakeBatch: number;
  /** Each error-webhook POST's timeout (WEFT_ERROR_WEBHOOK_TIMEOUT_MS). */
  errorWebhookTimeoutMs: number;
  /** Error-webhook attempts before giving up (WEFT_ERROR_WEBHOOK_MAX_ATTEMPTS). */
  errorWebhookMaxAttempts: number;
  /** Delay before the second attempt, doubled after each (WEFT_ERROR_WEBHOOK_BACKOFF_MS). */
  errorWebhookBackoffMs: number;
  /** Longest delay between attempts (WEFT_ERROR_WEBHOOK_MAX_BACKOFF_MS). */
  errorWebhookMaxBackoffMs: number;
  /** Most of a webhook's answer read (WEFT_ERROR_WEBHOOK_MAX_RESPONSE_BYTES). */
  errorWebhookMaxResponseBytes: number;
  /** How long a synchronous run's events may wait to be written whole by one commit; 0 writes its start first (WEFT_SYNC_RUN_HOLD_MS). */
  syncRunHoldMs: number;
}

function engineDurability(env: NodeJS.ProcessEnv): EngineDurabilityConfig {
  const hour = 3_600_000;
  return {
    maxResumes: integer(env, 'WEFT_ENGINE_MAX_RESUMES', 3, 1, 1000),
    parkAfterSeconds: integer(env, 'WEFT_WAIT_PARK_AFTER_SECONDS', 60, 1, 365 * 24 * 3600),
    wakeBatch: integer(env, 'WEFT_PARKED_WAKE_BATCH', 500, 1, 100_000),
    errorWebhookTimeoutMs: integer(env, 'WEFT_ERROR_WEBHOOK_TIMEOUT_MS', 10_000, 100, 300_000),
    errorWebhookMaxAttempts: integer(env, 'WEFT_ERROR_WEBHOOK_MAX_ATTEMPTS', 15, 1, 1000),
    errorWebhookBackoffMs: integer(env, 'WEFT_ERROR_WEBHOOK_BACKOFF_MS', 5000, 10, 24 * hour),
    errorWebhookMaxBackoffMs: integer(env, 'WEFT_ERROR_WEBHOOK_MAX_BACKOFF_MS', hour, 10, 7 * 24 * hour),
    errorWebhookMaxResponseBytes: integer(env, 'WEFT_ERROR_WEBHOOK_MAX_RESPONSE_BYTES', 64 * 1024, 0, 16 * 1024 * 1024),
    syncRunHoldMs: integer(env, 'WEFT_SYNC_RUN_HOLD_MS', 100, 0, 10_000),
  };
}

export interface MediaNodeLimits {
  /** Largest file a node reads from blob storage (attachments, OCR input). */
  fileMaxBytes: number;
  /** OCR workers per engine (one process-wide pool; each holds a Tesseract instance). */
  ocrWorkers: number;
  /** Most PDF pages one OCR node renders. */
  ocrMaxPages: number;
  /** Default time limit of an OCR node. */
  ocrTimeoutMs: number;
  /** Largest image (or rendered PDF page) in pixels handed to an OCR worker. */
  ocrMaxPixels: number;
  /** Chromium the web automation node drives (Debian's `chromium` package). */
  chromiumPath: string;
  /** Default time limit of each web automation step. */
  browserStepTimeoutMs: number;
  /** Web automation nodes running at once per engine (one browser context each). */
  browserMaxContexts: number;
}

/** Limits of the model nodes (mlModelNode, schematizationNode). */
export interface ModelNodeLimits {
  /** A model call's timeout when the node sets no `timeoutMs` (WEFT_MODEL_TIMEOUT_MS). */
  timeoutMs: number;
  /** Largest ONNX model file loaded (WEFT_ONNX_MODEL_MAX_BYTES). */
  onnxModelMaxBytes: number;
  /** ONNX sessions kept loaded per engine, least recently used dropped first (WEFT_ONNX_MAX_CACHED_MODELS). */
  onnxMaxCachedModels: number;
  /** Most values (elements, all output tensors together) one ONNX run may return (WEFT_ONNX_MAX_OUTPUT_VALUES). */
  onnxMaxOutputValues: number;
  /** Worker threads evaluating JSONata mappings per engine, one evaluation each at a time (WEFT_JSONATA_WORKERS). */
  jsonataWorkers: number;
  /** Heap limit of each JSONata worker; a mapping beyond it fails (WEFT_JSONATA_MAX_MEMORY_MB). */
  jsonataMaxMemoryMb: number;
}

export interface EventLimitsConfig {
  /** Largest event an execution may append (WEFT_EVENT_MAX_BYTES); keep it below NATS max_payload. */
  maxEventBytes: number;
  /** Values (node outputs, trigger data, loop items) larger than this go to blob storage (WEFT_EVENT_VALUE_INLINE_MAX_BYTES). */
  valueInlineMaxBytes: number;
  /** Largest value an execution keeps (node output, trigger data); a node whose output is larger fails (WEFT_EVENT_VALUE_MAX_BYTES). */
  valueMaxBytes: number;
  /** Items one loop node may iterate (WEFT_LOOP_MAX_ITEMS). */
  loopMaxItems: number;
  /** Largest script result, as JSON text, checked inside the isolate (WEFT_SCRIPT_OUTPUT_MAX_BYTES). */
  scriptOutputMaxBytes: number;
  /** WEFT_EVENTS keeps messages at most this long (WEFT_EVENTS_STREAM_MAX_AGE_SECONDS). */
  streamMaxAgeSeconds: number;
  /** WEFT_EVENTS keeps at most this many bytes, dropping the oldest (WEFT_EVENTS_STREAM_MAX_BYTES). */
  streamMaxBytes: number;
}

function eventLimits(env: NodeJS.ProcessEnv): EventLimitsConfig {
  const MiB = 1024 * 1024;
  const limits: EventLimitsConfig = {
    maxEventBytes: integer(env, 'WEFT_EVENT_MAX_BYTES', 4 * MiB, 64 * 1024, 64 * MiB),
    valueInlineMaxBytes: integer(env, 'WEFT_EVENT_VALUE_INLINE_MAX_BYTES', 256 * 1024, 1024, 16 * MiB),
    valueMaxBytes: integer(env, 'WEFT_EVENT_VALUE_MAX_BYTES', 16 * MiB, MiB, 1024 * MiB),
    loopMaxItems: integer(env, 'WEFT_LOOP_MAX_ITEMS', 10_000, 1, 10_000_000),
    scriptOutputMaxBytes: integer(env, 'WEFT_SCRIPT_OUTPUT_MAX_BYTES', 16 * MiB, 1024, 512 * MiB),
    streamMaxAgeSeconds: integer(env, 'WEFT_EVENTS_STREAM_MAX_AGE_SECONDS', 7 * 24 * 3600, 60, 10 * 365 * 24 * 3600),
    streamMaxBytes: integer(env, 'WEFT_EVENTS_STREAM_MAX_BYTES', 1024 * MiB, MiB, Number.MAX_SAFE_INTEGER),
  };
  // An inline value must leave room for the rest of its event.
  if (limits.valueInlineMaxBytes * 2 > limits.maxEventBytes) {
    throw new ConfigError('WEFT_EVENT_VALUE_INLINE_MAX_BYTES must be at most half of WEFT_EVENT_MAX_BYTES');
  }
  return limits;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const optional = (env: NodeJS.ProcessEnv, name: string): string | undefined => {
  const value = env[name]?.trim();
  return value ? value : undefined;
};

const integer = (env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number => {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
};

const flag = (env: NodeJS.ProcessEnv, name: string): boolean => {
  const raw = optional(env, name)?.toLowerCase();
  if (raw === undefined) return false;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
};

function natsConnection(env: NodeJS.ProcessEnv): NatsConnectionConfig {
  const user = optional(env, 'WEFT_NATS_USER');
  const password = optional(env, 'WEFT_NATS_PASSWORD');
  const credsFile = optional(env, 'WEFT_NATS_CREDS');
  if (Boolean(user) !== Boolean(password)) {
    throw new ConfigError('WEFT_NATS_USER and WEFT_NATS_PASSWORD go together');
  }
  if (user && credsFile) throw new ConfigError('set WEFT_NATS_USER/WEFT_NATS_PASSWORD or WEFT_NATS_CREDS, not both');
  const caFile = optional(env, 'WEFT_NATS_TLS_CA');
  const certFile = optional(env, 'WEFT_NATS_TLS_CERT');
  const keyFile = optional(env, 'WEFT_NATS_TLS_KEY');
  if (Boolean(certFile) !== Boolean(keyFile)) {
    throw new ConfigError('WEFT_NATS_TLS_CERT and WEFT_NATS_TLS_KEY go together');
  }
  const tls = flag(env, 'WEFT_NATS_TLS') || Boolean(caFile ?? certFile) ? { caFile, certFile, keyFile } : undefined;
  return { user, password, credsFile, tls };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): WeftConfig {
  const bucket = optional(env, 'WEFT_S3_BUCKET');
  return {
    port: integer(env, 'WEFT_PORT', 8080, 0, 65535),
    host: optional(env, 'WEFT_HOST') ?? '127.0.0.1',
    dataDir: resolve(optional(env, 'WEFT_DATA_DIR') ?? './.weft'),
    databaseUrl: optional(env, 'WEFT_DATABASE_URL'),
    embeddedPostgres: {
      startTimeoutMs: integer(env, 'WEFT_EMBEDDED_PG_START_TIMEOUT_MS', 120_000, 1_000, 3_600_000),
      stopTimeoutMs: integer(env, 'WEFT_EMBEDDED_PG_STOP_TIMEOUT_MS', 60_000, 1_000, 3_600_000),
    },
    natsUrl: optional(env, 'WEFT_NATS_URL'),
    nats: natsConnection(env),
    bootstrapApiKey: optional(env, 'WEFT_BOOTSTRAP_API_KEY'),
    secretKey: optional(env, 'WEFT_SECRET_KEY'),
    bodyLimitBytes: integer(env, 'WEFT_BODY_LIMIT_BYTES', 5 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    busMaxMessageBytes: integer(env, 'WEFT_BUS_MAX_MESSAGE_BYTES', 64 * 1024 * 1024, 64 * 1024, 1024 * 1024 * 1024),
    databaseTimeouts: {
      statementMs: integer(env, 'WEFT_DB_STATEMENT_TIMEOUT_MS', 60_000, 0, 86_400_000),
      lockMs: integer(env, 'WEFT_DB_LOCK_TIMEOUT_MS', 15_000, 0, 86_400_000),
      idleInTransactionMs: integer(env, 'WEFT_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS', 60_000, 0, 86_400_000),
      keepAliveMs: integer(env, 'WEFT_DB_KEEPALIVE_MS', 10_000, 1_000, 3_600_000),
      sessionMs: integer(env, 'WEFT_DB_SESSION_TIMEOUT_MS', 5_000, 100, 600_000),
    },
    engineLimits: {
      maxRunningExecutions: integer(env, 'WEFT_ENGINE_MAX_RUNNING_EXECUTIONS', 200, 1, 100_000),
      executionMaxDeliver: integer(env, 'WEFT_EXECUTION_MAX_DELIVER', 20, 1, 1_000),
      scriptMaxMemoryMb: integer(env, 'WEFT_SCRIPT_MAX_MEMORY_MB', 256, 8, 1024),
      scriptMaxWarmIsolates: integer(env, 'WEFT_SCRIPT_MAX_WARM_ISOLATES', 32, 1, 10_000),
      scriptMemoryBudgetMb: integer(env, 'WEFT_SCRIPT_MEMORY_BUDGET_MB', 2048, 8, 1_048_576),
      scriptRunsPerIsolate: integer(env, 'WEFT_SCRIPT_RUNS_PER_ISOLATE', 4, 1, 1_000),
    },
    outboundBlockPrivate: flag(env, 'WEFT_OUTBOUND_BLOCK_PRIVATE'),
    events: eventLimits(env),
    engineDurability: engineDurability(env),
    httpResponseMaxBytes: integer(env, 'WEFT_HTTP_RESPONSE_MAX_BYTES', 10 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    models: {
      timeoutMs: integer(env, 'WEFT_MODEL_TIMEOUT_MS', 60_000, 100, 3_600_000),
      onnxModelMaxBytes: integer(env, 'WEFT_ONNX_MODEL_MAX_BYTES', 256 * 1024 * 1024, 1024, 8 * 1024 * 1024 * 1024),
      onnxMaxCachedModels: integer(env, 'WEFT_ONNX_MAX_CACHED_MODELS', 4, 1, 1_000),
      onnxMaxOutputValues: integer(env, 'WEFT_ONNX_MAX_OUTPUT_VALUES', 1_000_000, 1, 100_000_000),
      jsonataWorkers: integer(env, 'WEFT_JSONATA_WORKERS', 2, 1, 64),
      jsonataMaxMemoryMb: integer(env, 'WEFT_JSONATA_MAX_MEMORY_MB', 128, 16, 16_384),
    },
    mediaNodes: {
      fileMaxBytes: integer(env, 'WEFT_NODE_FILE_MAX_BYTES', 50 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
      ocrWorkers: integer(env, 'WEFT_OCR_WORKERS', 1, 1, 64),
      ocrMaxPages: integer(env, 'WEFT_OCR_MAX_PAGES', 50, 1, 10_000),
      ocrTimeoutMs: integer(env, 'WEFT_OCR_TIMEOUT_MS', 120_000, 1_000, 3_600_000),
      ocrMaxPixels: integer(env, 'WEFT_OCR_MAX_PIXELS', 40_000_000, 10_000, 1_000_000_000),
      chromiumPath: optional(env, 'WEFT_CHROMIUM_PATH') ?? '/usr/bin/chromium',
      browserStepTimeoutMs: integer(env, 'WEFT_BROWSER_STEP_TIMEOUT_MS', 30_000, 100, 600_000),
      browserMaxContexts: integer(env, 'WEFT_BROWSER_MAX_CONTEXTS', 4, 1, 256),
    },
    nodeConfigMaxBytes: integer(env, 'WEFT_NODE_CONFIG_MAX_BYTES', 16 * 1024 * 1024, 1024, 512 * 1024 * 1024),
    s3: bucket
      ? {
          endpoint: optional(env, 'WEFT_S3_ENDPOINT'),
          region: optional(env, 'WEFT_S3_REGION') ?? 'us-east-1',
          bucket,
          accessKeyId: optional(env, 'WEFT_S3_ACCESS_KEY_ID'),
          secretAccessKey: optional(env, 'WEFT_S3_SECRET_ACCESS_KEY'),
        }
      : undefined,
    triggers: {
      webhookMaxWaitSeconds: integer(env, 'WEFT_WEBHOOK_MAX_WAIT_SECONDS', 50, 0, 3_600),
      webhookMaxFiles: integer(env, 'WEFT_WEBHOOK_MAX_FILES', 20, 0, 1_000),
      webhookFileMaxBytes: integer(env, 'WEFT_WEBHOOK_FILE_MAX_BYTES', 25 * 1024 * 1024, 1, 5 * 1024 * 1024 * 1024),
      resyncSeconds: integer(env, 'WEFT_TRIGGER_RESYNC_SECONDS', 60, 1, 86_400),
      replicaId: optional(env, 'WEFT_TRIGGER_REPLICA_ID'),
    },
    testing: {
      // Below the gateway's 60 s answer limit, so a single run over HTTP answers with its result.
      runTimeoutSeconds: integer(env, 'WEFT_TESTING_RUN_TIMEOUT_SECONDS', 45, 1, 300),
      batchConcurrency: integer(env, 'WEFT_TESTING_BATCH_CONCURRENCY', 1, 1, 64),
      batchMaxCases: integer(env, 'WEFT_TESTING_BATCH_MAX_CASES', 1000, 1, 100_000),
      batchWaitSeconds: integer(env, 'WEFT_TESTING_BATCH_WAIT_SECONDS', 30, 0, 50),
      maxViolations: integer(env, 'WEFT_TESTING_MAX_VIOLATIONS', 1000, 1, 100_000),
    },
    providers: {
      gmailApiUrl: optional(env, 'WEFT_GMAIL_API_URL'),
      graphApiUrl: optional(env, 'WEFT_GRAPH_API_URL'),
      googleTokenUrl: optional(env, 'WEFT_GOOGLE_TOKEN_URL'),
      microsoftTokenUrl: optional(env, 'WEFT_MICROSOFT_TOKEN_URL'),
      googleAuthUrl: optional(env, 'WEFT_GOOGLE_AUTH_URL'),
      microsoftAuthUrl: optional(env, 'WEFT_MICROSOFT_AUTH_URL'),
    },
    mail: {
      attachmentMaxBytes: integer(env, 'WEFT_MAIL_ATTACHMENT_MAX_BYTES', 25 * 1024 * 1024, 0, 1024 * 1024 * 1024),
      maxPollIntervalSeconds: integer(env, 'WEFT_MAIL_MAX_POLL_INTERVAL_SECONDS', 300, 1, 86_400),
      pollOverlapSeconds: integer(env, 'WEFT_MAIL_POLL_OVERLAP_SECONDS', 300, 0, 86_400),
      claimLeaseSeconds: integer(env, 'WEFT_MAIL_CLAIM_LEASE_SECONDS', 120, 1, 86_400),
      pageSize: integer(env, 'WEFT_MAIL_PAGE_SIZE', 100, 1, 500),
      oauthStateTtlSeconds: integer(env, 'WEFT_OAUTH_STATE_TTL_SECONDS', 600, 30, 86_400),
      oauthMaxPendingConsents: integer(env, 'WEFT_OAUTH_MAX_PENDING_CONSENTS', 50, 1, 10_000),
    },
  };
}
