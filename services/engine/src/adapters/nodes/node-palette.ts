import type { WeftConfig } from '@weft/config';
import type { NodeExecutor, NodeExecutorRegistry } from '../../domain/nodes/node-executor.js';
import { conditionalNodeExecutor } from '../../domain/nodes/conditional-node.js';
import { inputNodeExecutor } from '../../domain/nodes/input-node.js';
import { createLoopNodeExecutor } from '../../domain/nodes/loop-node.js';
import { outputNodeExecutor } from '../../domain/nodes/output-node.js';
import { waitNodeExecutor } from '../../domain/nodes/wait-node.js';
import { databaseNodeExecutor } from './database-node.js';
import { OutboundGuard } from '../http/outbound-guard.js';
import { ProtectedEndpoint, type Resolver } from '../http/protected-endpoint.js';
import { integrationNodeExecutor, type BlobSink } from './integration-node.js';
import { nodeFileSource, type NodeFileSource } from './node-files.js';
import { AbortableSemaphore } from './abortable-semaphore.js';
import { ocrNodeExecutor } from './ocr-node.js';
import { OcrWorkers } from './ocr-workers.js';
import { BrowserHost } from './browser-host.js';
import { webAutomationNodeExecutor } from './web-automation-node.js';
import type { IsolateLimits } from './script-isolate-pool.js';
import { ScriptSandbox } from './script-sandbox.js';
import { scriptNodeExecutor } from './script-node.js';
import { SqlConnections } from './sql-connections.js';
import { sqlNodeExecutor } from './sql-node.js';
import type { DataBlockSchemas } from './data-block-schemas.js';
import { JsonataMappings } from './jsonata-mapping.js';
import { JsonSchemaValidators } from './json-schema-validators.js';
import { mlModelNodeExecutor } from './ml-model-node.js';
import { OnnxModels, type ModelBlobs } from './onnx-models.js';
import { schematizationNodeExecutor } from './schematization-node.js';

/** The node types this engine runs, with the resources they hold (isolates, database pools). */
export interface NodePalette {
  executors: NodeExecutorRegistry;
  /** ONNX models loaded now (each loaded once per engine and shared). */
  cachedOnnxModels(): number;
  /** ONNX runs in the worker now, and worker threads ended to stop a cancelled or timed-out run. */
  onnxWorker(): { runsInFlight: number; stoppedWorkers: number };
  close(): Promise<void>;
}

export function createNodePalette(
  options: {
    blobs?: BlobSink;
    /** Reads the files node configs reference (email attachments, OCR input). */
    files?: NodeFileSource;
    /** WEFT_OCR_*, WEFT_BROWSER_*, WEFT_CHROMIUM_PATH. */
    media?: Partial<WeftConfig['mediaNodes']>;
    httpBackoffMs?: number;
    blockPrivate?: boolean;
    /** WEFT_HTTP_RESPONSE_MAX_BYTES. */
    httpResponseMaxBytes?: number;
    /** WEFT_DATABASE_URL: the service's own database, which no node may connect to. */
    serviceDatabaseUrl?: string;
    /** DNS for the outbound guard (tests inject one). */
    resolve?: Resolver;
    /** WEFT_LOOP_MAX_ITEMS and WEFT_SCRIPT_OUTPUT_MAX_BYTES; their defaults when absent. */
    limits?: { loopMaxItems?: number; scriptOutputMaxBytes?: number };
    /** WEFT_SCRIPT_MAX_MEMORY_MB, WEFT_SCRIPT_MAX_WARM_ISOLATES, WEFT_SCRIPT_MEMORY_BUDGET_MB, WEFT_SCRIPT_RUNS_PER_ISOLATE. */
    scriptIsolates?: Partial<IsolateLimits>;
    /** Data block schemas for schematization nodes (the catalog over the bus). */
    dataBlocks?: DataBlockSchemas;
    /** Where ONNX models uploaded as files are read from. */
    modelBlobs?: ModelBlobs;
    /** WEFT_MODEL_TIMEOUT_MS, WEFT_ONNX_*, WEFT_JSONATA_WORKERS, WEFT_JSONATA_MAX_MEMORY_MB. */
    models?: Partial<WeftConfig['models']>;
    /** Replace the packages node runtimes load (tests: a missing runtime). */
    runtimes?: { onnxModule?: string; jsonataModule?: string };
  } = {},
): NodePalette {
  const sandbox = new ScriptSandbox({
    maxOutputChars: options.limits?.scriptOutputMaxBytes,
    isolates: options.scriptIsolates,
  });
  const guard = new OutboundGuard({
    blockPrivate: options.blockPrivate === true,
    protectedEndpoints: options.serviceDatabaseUrl ? [ProtectedEndpoint.ofDatabaseUrl(options.serviceDatabaseUrl)] : [],
    resolve: options.resolve,
  });
  const connections = new SqlConnections(guard);
  // Tesseract workers start on the first OCR node and serve every later one.
  const ocr = new OcrWorkers(options.media?.ocrWorkers ?? 1);
  const ocrDecoders = new AbortableSemaphore(options.media?.ocrWorkers ?? 1);
  // One Chromium per engine, launched on the first web automation node; a fresh context per run.
  const browsers = new BrowserHost({
    executablePath: options.media?.chromiumPath ?? '/usr/bin/chromium',
    maxContexts: options.media?.browserMaxContexts ?? 4,
  });
  const responseMaxBytes = options.httpResponseMaxBytes ?? 10 * 1024 * 1024;
  const modelTimeoutMs = options.models?.timeoutMs ?? 60_000;
  const validators = new JsonSchemaValidators();
  // Loaded models stay for the engine's life: every execution reuses their sessions.
  const onnx = new OnnxModels({
    blobs: options.modelBlobs,
    maxModelBytes: options.models?.onnxModelMaxBytes ?? 256 * 1024 * 1024,
    maxCachedModels: options.models?.onnxMaxCachedModels ?? 4,
    maxOutputValues: options.models?.onnxMaxOutputValues ?? 1_000_000,
    runtimeModule: options.runtimes?.onnxModule,
  });
  // JSONata mappings run in worker threads started on first use, each with its own heap limit.
  const mappings = new JsonataMappings(
    {
      workers: options.models?.jsonataWorkers ?? 2,
      maxMemoryMb: options.models?.jsonataMaxMemoryMb ?? 128,
    },
    options.runtimes?.jsonataModule,
  );
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const executors: NodeExecutor<any>[] = [
    inputNodeExecutor,
    outputNodeExecutor,
    conditionalNodeExecutor,
    createLoopNodeExecutor(options.limits?.loopMaxItems),
    waitNodeExecutor,
    scriptNodeExecutor(sandbox),
    integrationNodeExecutor({
      blobs: options.blobs,
      backoffMs: options.httpBackoffMs,
      guard,
      responseMaxBytes: options.httpResponseMaxBytes,
      files: options.files,
    }),
    sqlNodeExecutor(connections),
    databaseNodeExecutor(connections),
    ocrNodeExecutor({
      workers: ocr,
      decoders: ocrDecoders,
      files: options.files ?? nodeFileSource(undefined),
      maxPages: options.media?.ocrMaxPages ?? 50,
      timeoutMs: options.media?.ocrTimeoutMs ?? 120_000,
      maxPixels: options.media?.ocrMaxPixels ?? 40_000_000,
    }),
    webAutomationNodeExecutor({
      browsers,
      guard,
      blobs: options.blobs,
      stepTimeoutMs: options.media?.browserStepTimeoutMs ?? 30_000,
    }),
    mlModelNodeExecutor({ guard, responseMaxBytes, timeoutMs: modelTimeoutMs, onnx, validators }),
    schematizationNodeExecutor({
      schemas: options.dataBlocks ?? noDataBlocks,
      mappings,
      validators,
      guard,
      responseMaxBytes,
      timeoutMs: modelTimeoutMs,
    }),
  ];
  return {
    executors: new Map(executors.map((executor) => [executor.type, executor])),
    cachedOnnxModels: () => onnx.cachedModels,
    onnxWorker: () => ({ runsInFlight: onnx.runsInFlight, stoppedWorkers: onnx.stoppedWorkers }),
    async close() {
      sandbox.dispose();
      await connections.close();
      await onnx.close();
      await mappings.close();
      await ocr.close();
      await browsers.close();
      await guard.close();
    },
  };
}

/** Without the catalog (unit tests of other nodes), every schema is unknown. */
const noDataBlocks: DataBlockSchemas = {
  blocksOf: (_organizationId, schemaId) =>
    Promise.reject(Object.assign(new Error(`schema ${schemaId} not found`), { status: 404 })),
};
