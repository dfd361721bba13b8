import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from '@opentelemetry/api'
import type { SpanExporter, TracerProvider } from '@opentelemetry/sdk-trace'

/** Where traces go, from the standard OTEL_* variables (config.ts reads them). */
export interface TracingConfig {
  /** The OTLP/HTTP traces endpoint (…/v1/traces); none: tracing is off. */
  endpoint: string | undefined
  headers: Record<string, string>
  serviceName: string
}

let propagating = false

/**
 * The context of the running span follows async work through AsyncLocalStorage, and W3C Trace Context crosses
 * processes: OpenTelemetry makes both process-wide, so they are registered once, by the first platform that traces.
 */
async function registerPropagation(): Promise<void> {
  if (propagating) return
  propagating = true
  const [{ AsyncLocalStorageContextManager }, { W3CTraceContextPropagator }] = await Promise.all([import('@opentelemetry/context-async-hooks'), import('@opentelemetry/core')])
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  propagation.setGlobalPropagator(new W3CTraceContextPropagator())
}

/**
 * Spans around what the platform does for someone (a request, a turn, each runner and tool call, each channel
 * delivery, each background task), one trace from the caller's `traceparent` to the provider's: W3C Trace Context is
 * read on every request and sent on every outbound call. Off (every call a plain pass-through) unless an exporter is
 * configured.
 */
export class Tracing {
  readonly #provider: TracerProvider | undefined
  readonly #tracer

  private constructor(provider: TracerProvider | undefined) {
    this.#provider = provider
    this.#tracer = provider?.getTracer('switchboard')
  }

  /** Tracing that is off: every call a plain pass-through. */
  static off(): Tracing {
    return new Tracing(undefined)
  }

  /**
   * Tracing to the configured OTLP endpoint, or to `exporter` (the tests' in-memory one); off without either. The
   * SDK is loaded only then: most starts trace nothing, and loading it costs them start-up time.
   */
  static async create(config: TracingConfig, exporter?: SpanExporter): Promise<Tracing> {
    if (!exporter && !config.endpoint) return Tracing.off()
    const [{ BatchSpanProcessor, SimpleSpanProcessor, TracerProvider }, { OTLPTraceExporter }, { resourceFromAttributes }] = await Promise.all([
      import('@opentelemetry/sdk-trace'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
    ])
    const processors = [
      ...(exporter ? [new SimpleSpanProcessor({ exporter })] : []),
      ...(config.endpoint ? [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: config.endpoint, headers: config.headers }) })] : []),
    ]
    await registerPropagation()
    return new Tracing(
      new TracerProvider({
        resource: resourceFromAttributes({ 'service.name': config.serviceName }),
        spanProcessors: processors,
        // Attributes carry names a model or a tenant chose (a tool's): bounded, as everything sent out is.
        spanLimits: { attributeValueLengthLimit: 256 },
      }),
    )
  }

  get enabled(): boolean {
    return this.#tracer !== undefined
  }

  /** The context a request's `traceparent` names (a new trace without one). */
  incoming(headers: Headers): Context {
    if (!this.#tracer) return ROOT_CONTEXT
    return propagation.extract(ROOT_CONTEXT, headers, { get: (h, key) => h.get(key) ?? undefined, keys: (h) => [...h.keys()] })
  }

  /** Adds the running span's `traceparent` to an outbound request's headers. */
  outgoing(headers: Headers): void {
    if (this.#tracer) propagation.inject(context.active(), headers, { set: (h, key, value) => h.set(key, value) })
  }

  /** Runs `work` in a span `name`, a child of `parent` (the running span by default), ended when `work` settles. */
  async span<T>(name: string, attributes: Attributes, work: (span: Span | undefined) => Promise<T>, parent: Context = context.active(), kind = SpanKind.INTERNAL): Promise<T> {
    if (!this.#tracer) return work(undefined)
    const span = this.#tracer.startSpan(name, { attributes, kind }, parent)
    try {
      return await context.with(trace.setSpan(parent, span), () => work(span))
    } catch (error) {
      span.recordException(error as Error)
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message })
      throw error
    } finally {
      span.end()
    }
  }

  /**
   * A span around an async sequence (a turn's events, a runner's stream): each step runs in the span's context, so
   * the calls it makes are its children and carry its `traceparent`. The span ends with the sequence.
   */
  async *spanned<T>(name: string, attributes: Attributes, steps: () => AsyncIterable<T>, parent: Context = context.active()): AsyncGenerator<T> {
    if (!this.#tracer) return yield* steps()
    const span = this.#tracer.startSpan(name, { attributes }, parent)
    const inside = trace.setSpan(parent, span)
    const iterator = context.with(inside, () => steps()[Symbol.asyncIterator]())
    try {
      for (;;) {
        const step = await context.with(inside, () => iterator.next())
        if (step.done) return
        yield step.value
      }
    } catch (error) {
      span.recordException(error as Error)
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message })
      throw error
    } finally {
      await context.with(inside, () => iterator.return?.())
      span.end()
    }
  }

  /** Sends what is still buffered and stops (at shutdown). */
  async close(): Promise<void> {
    await this.#provider?.shutdown()
  }
}
