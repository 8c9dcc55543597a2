import type { Clock, LockId, LockMode, Span, Trace } from '@lockfabric/ports';

/** Span attribute keys shared by every protocol (the telemetry library documents them). */
export const LOCK_ATTR = {
  protocol: 'lockfabric.protocol',
  lock: 'lockfabric.lock.id',
  mode: 'lockfabric.lock.mode',
  outcome: 'lockfabric.outcome',
  verbs: 'lockfabric.verbs',
  retries: 'lockfabric.retries',
  grantNs: 'lockfabric.grant_ns',
  waitNs: 'lockfabric.wait_ns',
  client: 'lockfabric.client',
} as const;

/** Bookkeeping of one acquire: its span, verbs issued and retries, closed once with an outcome. */
export class AcquireSpan {
  readonly span: Span;
  verbs = 0;
  retries = 0;
  private readonly startNs: number;

  constructor(
    trace: Trace,
    private readonly clock: Clock,
    protocol: string,
    lock: LockId,
    mode: LockMode,
    client: string,
  ) {
    this.startNs = clock.nowNs();
    this.span = trace.startSpan('lock.acquire', {
      attributes: { [LOCK_ATTR.protocol]: protocol, [LOCK_ATTR.lock]: lock, [LOCK_ATTR.mode]: mode, [LOCK_ATTR.client]: client },
    });
  }

  granted(): void {
    this.finish('granted');
  }

  failed(error: unknown): void {
    this.span.recordError(error);
    this.finish(error instanceof Error && 'code' in error ? String((error as { code: unknown }).code) : 'error');
  }

  private finish(outcome: string): void {
    const waitNs = this.clock.nowNs() - this.startNs;
    this.span.setAttribute(LOCK_ATTR.outcome, outcome);
    this.span.setAttribute(LOCK_ATTR.verbs, this.verbs);
    this.span.setAttribute(LOCK_ATTR.retries, this.retries);
    this.span.setAttribute(LOCK_ATTR.waitNs, waitNs);
    this.span.end();
  }
}
