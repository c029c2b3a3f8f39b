import { context, propagation, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { NodeSDK, type NodeSDKConfiguration } from '@opentelemetry/sdk-node';
import { InMemorySpanExporter, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace';
import { installTraceFallback, markSdkStarted, uninstallTraceFallback } from './trace-fallback.js';

export interface TelemetryOptions {
  /**
   * Export every span synchronously to this exporter instead of reading OTEL_* variables
   * (tests pass an InMemorySpanExporter). Starts the SDK even when no OTEL_* variable is set.
   */
  spanExporter?: SpanExporter;
}

export interface Telemetry {
  /** False when tracing is off: no SDK was started and every tracing helper is a no-op. */
  readonly enabled: boolean;
  /** Flushes pending spans and unregisters the global providers (so a later init can register again). */
  shutdown(): Promise<void>;
}

const isSet = (env: NodeJS.ProcessEnv, name: string): boolean => (env[name]?.trim() ?? '') !== '';

const disabledTelemetry: Telemetry = { enabled: false, shutdown: async () => uninstallTraceFallback() };

/** A fresh in-memory exporter, for tests that assert on finished spans. */
export const createInMemorySpanExporter = (): InMemorySpanExporter => new InMemorySpanExporter();
export type { InMemorySpanExporter, SpanExporter };

/**
 * Starts the OpenTelemetry NodeSDK for one service, configured from the standard OTEL_* variables.
 * Off (nothing started) unless OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_TRACES_EXPORTER is set, so
 * embedded mode and tests pay nothing for tracing they do not collect.
 */
export function initTelemetry(serviceName: string, options: TelemetryOptions = {}): Telemetry {
  // NodeSDK itself reads process.env, so the on/off decision must read the same variables.
  const configuration = sdkConfiguration(serviceName, process.env, options.spanExporter);
  if (!configuration) {
    installTraceFallback();
    return disabledTelemetry;
  }
  uninstallTraceFallback();
  const sdk = new NodeSDK(configuration);
  sdk.start();
  markSdkStarted(true);
  let stopped: Promise<void> | undefined;
  return {
    enabled: true,
    shutdown: () => {
      stopped ??= sdk.shutdown().finally(() => {
        markSdkStarted(false);
        trace.disable();
        propagation.disable();
        context.disable();
      });
      return stopped;
    },
  };
}

function sdkConfiguration(
  serviceName: string,
  env: NodeJS.ProcessEnv,
  spanExporter: SpanExporter | undefined,
): Partial<NodeSDKConfiguration> | undefined {
  // Weft only emits traces; metrics and logs stay off unless asked for explicitly.
  const signals: Partial<NodeSDKConfiguration> = {
    serviceName,
    ...(isSet(env, 'OTEL_METRICS_EXPORTER') ? {} : { metricReaders: [] }),
    ...(isSet(env, 'OTEL_LOGS_EXPORTER') ? {} : { logRecordProcessors: [] }),
  };
  if (spanExporter) {
    return {
      ...signals,
      metricReaders: [],
      logRecordProcessors: [],
      resourceDetectors: [],
      spanProcessors: [new SimpleSpanProcessor({ exporter: spanExporter })],
    };
  }
  const endpoint = isSet(env, 'OTEL_EXPORTER_OTLP_ENDPOINT') || isSet(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const exporterChosen = isSet(env, 'OTEL_TRACES_EXPORTER');
  if (!endpoint && !exporterChosen) return undefined;
  const protocolChosen = isSet(env, 'OTEL_EXPORTER_OTLP_PROTOCOL') || isSet(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL');
  // Without an explicit exporter or protocol, spans go as OTLP over HTTP to OTEL_EXPORTER_OTLP_ENDPOINT.
  return exporterChosen || protocolChosen ? signals : { ...signals, traceExporter: new OTLPTraceExporter() };
}
