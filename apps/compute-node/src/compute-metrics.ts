import type { Span, SpanAttributeValue, SpanContextRef, StartSpanOptions, Trace, VerbOpcode, WorkRequest } from '@lockfabric/ports';
import { ATTR_GRANT_NS, ATTR_LOCK_MODE, ATTR_OUTCOME, ATTR_PROTOCOL, ATTR_VERBS, ATTR_WAIT_NS, SPAN_LOCK_ACQUIRE, SPAN_LOCK_HANDOVER, SPAN_LOCK_RELEASE, SPAN_LOCK_RESET } from '@lockfabric/telemetry';
import type { MetricsRegistry } from '@lockfabric/telemetry';
import type { LiveFabric } from '@lockfabric/run-host';

/** Seconds, 10 µs to 10 s: emulated verbs cost tens of µs, contended acquires up to seconds. */
const LATENCY_BUCKETS_S = [1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const VERB_BUCKETS = [0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64, 128];
const NS_PER_S = 1e9;
/** Where protocols put why they reset a lock (DecLock: timeout, failure, overflow; DSLR: the CAS cause). */
const RESET_REASON_ATTRS = ['declock.reset.reason', 'lockfabric.dslr.reset_cause', 'lockfabric.reset.reason'];
const OBSERVED_SPANS = new Set([SPAN_LOCK_ACQUIRE, SPAN_LOCK_RELEASE, SPAN_LOCK_HANDOVER, SPAN_LOCK_RESET]);
const OPCODES: readonly VerbOpcode[] = ['read', 'write', 'cas', 'faa', 'masked-cas', 'masked-faa'];
const OPCODE_INDEX = new Map<string, number>(OPCODES.map((opcode, i) => [opcode, i]));

export interface ComputeMetrics {
  /** A Trace that feeds the lock metrics from the spans protocols already emit, then delegates. */
  trace(inner: Trace): Trace;
  /** Adds the counts tallied since the last call to the registry's counters (call before every scrape or export). */
  collect(): void;
}

/**
 * Lock metrics of a compute node: grant and wait time histograms, operations by outcome, verbs per
 * acquire, and verbs issued by opcode. They are read off the `lock.*` spans every protocol emits
 * (whether or not the span is sampled), so no protocol needs a metrics port; verbs by opcode are
 * counted where every remote batch leaves the node, the fabric's `post`. The two counters that move
 * on every verb and operation are tallied here and reach the registry at `collect`: a labelled
 * `inc` (a label object and a walk of the series tree) per verb was a measurable share of a
 * compute node's processor time in a 64-client run.
 */
export function registerComputeMetrics(metrics: MetricsRegistry, fabric: Pick<LiveFabric, 'post'>): ComputeMetrics {
  const grant = metrics.histogram({ name: 'lockfabric_lock_grant_seconds', help: 'Acquire invoke to grant, granted acquires', labelNames: ['protocol', 'mode'], buckets: LATENCY_BUCKETS_S });
  const wait = metrics.histogram({ name: 'lockfabric_lock_wait_seconds', help: 'Time an acquire waited before its outcome, by outcome', labelNames: ['protocol', 'outcome'], buckets: LATENCY_BUCKETS_S });
  const verbsPerAcquire = metrics.histogram({ name: 'lockfabric_verbs_per_acquire', help: 'Verbs one acquire issued', labelNames: ['protocol'], buckets: VERB_BUCKETS });
  const operations = metrics.counter({ name: 'lockfabric_lock_operations_total', help: 'Lock operations by kind and outcome', labelNames: ['protocol', 'operation', 'outcome'] });
  const handovers = metrics.counter({ name: 'lockfabric_lock_handovers_total', help: 'Direct handovers to a waiting holder', labelNames: ['protocol'] });
  const resets = metrics.counter({ name: 'lockfabric_lock_resets_total', help: 'Lock resets done by this node (DecLock, DSLR, ShiftLock recovery), by reason', labelNames: ['protocol', 'reason'] });
  const verbs = metrics.counter({ name: 'lockfabric_compute_verbs_total', help: 'Remote verbs posted by this node, by opcode', labelNames: ['opcode'] });

  const verbTally = new OpcodeTally();
  const operationTally = new OperationTally();

  // Wrapping the instance keeps the run service unchanged: every remote batch goes through post.
  const post = fabric.post.bind(fabric);
  fabric.post = (batch, options, settled) => {
    for (let i = 0; i < batch.length; i++) verbTally.add((batch[i] as WorkRequest).op);
    return post(batch, options, settled);
  };

  const observe = (name: string, seen: SeenAttributes) => {
    const protocol = String(seen.protocol ?? 'unknown');
    if (name === SPAN_LOCK_HANDOVER) return handovers.inc({ protocol });
    if (name === SPAN_LOCK_RESET) return resets.inc({ protocol, reason: String(seen.resetReason ?? 'unknown') });
    const outcome = String(seen.outcome ?? (name === SPAN_LOCK_RELEASE ? 'released' : 'unknown'));
    operationTally.add(protocol, name === SPAN_LOCK_ACQUIRE ? 'acquire' : 'release', outcome);
    if (name !== SPAN_LOCK_ACQUIRE) return;
    const waitNs = numeric(seen.waitNs);
    if (waitNs !== undefined) wait.observe({ protocol, outcome }, waitNs / NS_PER_S);
    // Protocols that know the grant instant report it; otherwise the acquire's wait is its grant time.
    const grantNs = numeric(seen.grantNs) ?? waitNs;
    if (outcome === 'granted' && grantNs !== undefined) grant.observe({ protocol, mode: String(seen.mode ?? 'unknown') }, grantNs / NS_PER_S);
    const verbCount = numeric(seen.verbs);
    if (verbCount !== undefined) verbsPerAcquire.observe({ protocol }, verbCount);
  };

  return {
    collect: () => {
      verbTally.drain((opcode, n) => verbs.inc({ opcode }, n));
      operationTally.drain((protocol, operation, outcome, n) => operations.inc({ protocol, operation, outcome }, n));
    },
    trace: (inner) => ({
      startSpan(name: string, options?: StartSpanOptions): Span {
        const span = inner.startSpan(name, options);
        if (!OBSERVED_SPANS.has(name)) return span;
        return new ObservedSpan(span, name, options?.attributes, observe);
      },
    }),
  };
}

/**
 * The few attributes the lock metrics read, in fixed fields. Collecting every attribute into a
 * fresh object made each acquire grow a dictionary-mode object, one of the compute node's top
 * frames in a CPU profile of an uncontended run.
 */
class SeenAttributes {
  protocol: SpanAttributeValue | undefined = undefined;
  outcome: SpanAttributeValue | undefined = undefined;
  mode: SpanAttributeValue | undefined = undefined;
  waitNs: SpanAttributeValue | undefined = undefined;
  grantNs: SpanAttributeValue | undefined = undefined;
  verbs: SpanAttributeValue | undefined = undefined;
  resetReason: SpanAttributeValue | undefined = undefined;

  set(key: string, value: SpanAttributeValue): void {
    switch (key) {
      case ATTR_PROTOCOL:
        this.protocol = value;
        return;
      case ATTR_OUTCOME:
        this.outcome = value;
        return;
      case ATTR_LOCK_MODE:
        this.mode = value;
        return;
      case ATTR_WAIT_NS:
        this.waitNs = value;
        return;
      case ATTR_GRANT_NS:
        this.grantNs = value;
        return;
      case ATTR_VERBS:
        this.verbs = value;
        return;
      default:
        // The first reason attribute a protocol sets wins, as the keys are listed in priority order.
        if (RESET_REASON_ATTRS.includes(key) && (this.resetReason === undefined || RESET_REASON_ATTRS.indexOf(key) <= this.resetReasonRank)) {
          this.resetReason = value;
          this.resetReasonRank = RESET_REASON_ATTRS.indexOf(key);
        }
    }
  }

  private resetReasonRank = RESET_REASON_ATTRS.length;
}

/** A span that feeds the lock metrics once, when it ends, and passes everything on to `span`. */
class ObservedSpan implements Span {
  private readonly seen = new SeenAttributes();
  private ended = false;

  constructor(
    private readonly span: Span,
    private readonly name: string,
    attributes: Readonly<Record<string, SpanAttributeValue>> | undefined,
    private readonly onEnd: (name: string, seen: SeenAttributes) => void,
  ) {
    if (attributes) for (const key in attributes) this.seen.set(key, attributes[key] as SpanAttributeValue);
  }

  get context() {
    return this.span.context;
  }

  setAttribute(key: string, value: SpanAttributeValue): void {
    this.seen.set(key, value);
    this.span.setAttribute(key, value);
  }

  addLink(context: SpanContextRef, attributes?: Record<string, SpanAttributeValue>): void {
    this.span.addLink(context, attributes);
  }

  recordError(error: unknown): void {
    this.span.recordError(error);
  }

  end(): void {
    if (!this.ended) this.onEnd(this.name, this.seen);
    this.ended = true;
    this.span.end();
  }
}

/**
 * Verbs by opcode since the last drain: one array slot per opcode the NIC knows, a map for any
 * other. Drained in the order opcodes were first seen, so the series keep the order they had.
 */
class OpcodeTally {
  private readonly known = new Float64Array(OPCODES.length);
  private readonly other = new Map<string, number>();
  private readonly order: string[] = [];

  add(opcode: string): void {
    const index = OPCODE_INDEX.get(opcode);
    if (index !== undefined) {
      const n = this.known[index] as number;
      if (n === 0 && !this.order.includes(opcode)) this.order.push(opcode);
      this.known[index] = n + 1;
      return;
    }
    const n = this.other.get(opcode);
    if (n === undefined && !this.order.includes(opcode)) this.order.push(opcode);
    this.other.set(opcode, (n ?? 0) + 1);
  }

  drain(into: (opcode: string, n: number) => void): void {
    for (const opcode of this.order) {
      const index = OPCODE_INDEX.get(opcode);
      const n = index === undefined ? (this.other.get(opcode) ?? 0) : (this.known[index] as number);
      if (n > 0) into(opcode, n);
    }
    this.known.fill(0);
    this.other.clear();
  }
}

/** Operations by protocol, kind and outcome since the last drain; a cell, once made, is reused. */
class OperationTally {
  private readonly cells = new Map<string, Map<string, Map<string, { n: number }>>>();

  add(protocol: string, operation: string, outcome: string): void {
    let byOperation = this.cells.get(protocol);
    if (!byOperation) this.cells.set(protocol, (byOperation = new Map()));
    let byOutcome = byOperation.get(operation);
    if (!byOutcome) byOperation.set(operation, (byOutcome = new Map()));
    const cell = byOutcome.get(outcome);
    if (cell) cell.n++;
    else byOutcome.set(outcome, { n: 1 });
  }

  drain(into: (protocol: string, operation: string, outcome: string, n: number) => void): void {
    for (const [protocol, byOperation] of this.cells) {
      for (const [operation, byOutcome] of byOperation) {
        for (const [outcome, cell] of byOutcome) {
          if (cell.n > 0) into(protocol, operation, outcome, cell.n);
          cell.n = 0;
        }
      }
    }
  }
}

function numeric(value: SpanAttributeValue | undefined): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
