// Types of offloop/otel for ES module importers: OpenTelemetry spans from offloop's tracing channels.

import type { TracerProvider } from '@opentelemetry/api';

export interface InstrumentOptions {
  /** The provider whose tracer makes the spans. Default: the global one of @opentelemetry/api. */
  tracerProvider?: TracerProvider;
  /** Record each call's parameter values as `db.query.parameter.<key>` attributes. Default false. */
  parameters?: boolean;
}

/**
 * Subscribes to every `offloop:<operation>` tracing channel and makes a
 * CLIENT span of each call. Returns a function that unsubscribes.
 */
export declare function instrument(options?: InstrumentOptions): () => void;
