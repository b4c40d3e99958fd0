import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import { BatchSpanProcessor, NodeTracerProvider, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { FastifyOtelInstrumentation } from '@fastify/otel';

/**
 * OpenTelemetry traces (docs/operations.md "Tracing"): a span per request (@fastify/otel), with
 * child spans for database statements (telemetry/query.ts, both stores), acquirer calls
 * (acquirer/observed.ts), webhook deliveries and every outgoing HTTP request (undici's
 * instrumentation). Exported over OTLP/HTTP only when OTEL_EXPORTER_OTLP_ENDPOINT (or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set; the exporter reads the standard OTEL_* settings
 * itself (headers, timeout), OTEL_SERVICE_NAME names the service (default tender).
 *
 * The trace id is the request id: the X-Request-Id header, `reqId` and `trace_id` in log lines.
 * A request that brings a W3C traceparent keeps its caller's trace id.
 */

/** The request id (a W3C trace id: 32 hex digits) of the request the current code runs for. */
const current = new AsyncLocalStorage<string>();

/** pino's mixin: every log line written while a request runs names its trace. */
export const traceMixin = () => {
  const id = current.getStore();
  return id ? { trace_id: id } : {};
};

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

/** Fastify's genReqId: the caller's trace id from traceparent, else a new one. */
export function requestIdOf(headers: Record<string, string | string[] | undefined>): string {
  const tp = headers.traceparent;
  const m = typeof tp === 'string' ? TRACEPARENT.exec(tp.trim().toLowerCase()) : null;
  return m && !/^0+$/.test(m[1]) ? m[1] : randomBytes(16).toString('hex');
}

/** Runs the rest of a request with its id as the current trace id (an onRequest hook calls it). */
export const enterRequest = (id: string) => current.enterWith(id);

/** n random hex digits, not all zero (an invalid id) */
function hex(n: number): string {
  let out = '';
  while (out.length < n)
    out += Math.floor(Math.random() * 2 ** 32)
      .toString(16)
      .padStart(8, '0');
  out = out.slice(0, n);
  return /^0+$/.test(out) ? hex(n) : out;
}

let provider: NodeTracerProvider | undefined;
let fastifyInstrumentation: FastifyOtelInstrumentation | undefined;

/** Whether spans are made and exported (OTEL_EXPORTER_OTLP_ENDPOINT set at start). */
export const tracingOn = () => provider !== undefined;

const tracer = () => trace.getTracer('tender');

/**
 * The segment after /invite/ and the other one-time link segments: the same rule as the log's
 * (src/log.ts URL_SECRET; telemetry imports nothing of ours, so it is written here again).
 */
const URL_SECRET = /(\/(?:invite|invites|invitations?|tokens?|once|reset|verify)\/)[A-Za-z0-9_~.%-]{8,}/gi;

/**
 * A query string, secrets of one-time links and digit runs that could be a card number are cut
 * from every string attribute before a span leaves the process: URLs of webhooks and pages may
 * carry tokens in their query, an invitation link its token in its path.
 */
function scrub(span: ReadableSpan) {
  const attrs = span.attributes as Record<string, unknown>;
  for (const [k, v] of Object.entries(attrs)) {
    if (typeof v !== 'string') continue;
    if (k === 'url.query' || k === 'http.target') {
      delete attrs[k];
      continue;
    }
    let out = (/^(url\.full|http\.url|url\.path|http\.route)$/.test(k) ? v.split('?')[0] : v).replace(URL_SECRET, '$1[masked]');
    out = out.replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\d(?:[ -]?\d){11,}/gi, (m) =>
      /[a-f]/i.test(m) ? m : '[masked]',
    );
    attrs[k] = out;
  }
}

/** The OTLP exporter behind a scrubbing step. */
const scrubbing = (inner: SpanExporter): SpanExporter => ({
  export(spans, done) {
    for (const s of spans) scrub(s);
    inner.export(spans, done);
  },
  shutdown: () => inner.shutdown(),
  forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
});

/**
 * Starts tracing when the environment asks for it; call before the app is built. Root spans of
 * a request take the request's id as their trace id, so the header, the logs and the trace agree.
 */
export function startTracing(env: NodeJS.ProcessEnv = process.env): boolean {
  if (provider) return true;
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return false;
  if (env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none') return false;
  provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME || 'tender' }),
    idGenerator: {
      generateTraceId: () => current.getStore() ?? hex(32),
      // span ids need only be unique within a trace: Math.random, as the SDK's own generator, not a crypto call each
      generateSpanId: () => hex(16),
    },
    spanProcessors: [new BatchSpanProcessor(scrubbing(new OTLPTraceExporter()), { scheduledDelayMillis: 1000 })],
  });
  provider.register();
  fastifyInstrumentation = new FastifyOtelInstrumentation({
    // one span per request, not one more for its handler and each hook: spans cost CPU to make and export
    instrumentHooks: false,
    instrumentHandler: false,
    recordExceptions: false,
    // `POST /v1/orders/:order_id/refunds/`: the route pattern, never the URL with its ids
    requestHook: (span, req) => span.updateName(`${req.method} ${req.routeOptions.url ?? 'unmatched'}`),
  });
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      fastifyInstrumentation,
      // outgoing HTTP (webhooks, wallet provider sessions); scrub() cuts query strings before export
      new UndiciInstrumentation(),
    ],
  });
  return true;
}

/** The Fastify plugin that makes the request spans; undefined when tracing is off. */
export const fastifyTracing = () => fastifyInstrumentation?.plugin();

/** Sends what is buffered and stops (a graceful stop). */
export async function stopTracing() {
  await provider?.shutdown().catch(() => {});
  provider = undefined;
  fastifyInstrumentation = undefined;
}

/** Runs fn in a child span of the current one; without tracing, just fn. */
export function traced<T>(name: string, attributes: Attributes, fn: (span?: Span) => Promise<T>, kind = SpanKind.INTERNAL): Promise<T> {
  if (!provider) return fn();
  return tracer().startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).name });
      throw err;
    } finally {
      span.end();
    }
  });
}
