import { LockFabricError } from '@lockfabric/ports';

/** A metric was defined or used wrongly: bad name, duplicate, label mismatch, negative counter step. */
export class MetricsError extends LockFabricError {
  readonly code = 'METRICS';
}

export type Labels = Readonly<Record<string, string | number>>;

export interface MetricOptions {
  readonly name: string;
  readonly help: string;
  readonly labelNames?: readonly string[];
}

export interface HistogramOptions extends MetricOptions {
  /** Upper bounds, strictly increasing and finite; `+Inf` is added. */
  readonly buckets: readonly number[];
}

export interface Counter {
  inc(labels?: Labels, value?: number): void;
  get(labels?: Labels): number;
}

export interface Gauge {
  set(labels: Labels | undefined, value: number): void;
  inc(labels?: Labels, value?: number): void;
  dec(labels?: Labels, value?: number): void;
  get(labels?: Labels): number;
}

export interface Histogram {
  observe(labels: Labels | undefined, value: number): void;
  /** Per-bucket (non-cumulative) counts, `+Inf` last, plus sum and count. */
  get(labels?: Labels): { readonly buckets: readonly number[]; readonly sum: number; readonly count: number };
}

// Names the OpenTelemetry Prometheus exporter passes through unchanged: it turns `:` into `_`
// and squeezes `__` runs to one `_`, so neither is allowed here (a label may not start with `__`
// in Prometheus anyway).
const METRIC_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const DOUBLE_UNDERSCORE = '__';
/** The exporter appends `_total` to every monotonic sum's name that lacks it. */
const COUNTER_SUFFIX = '_total';

type MetricType = 'counter' | 'gauge' | 'histogram';

interface Family {
  readonly type: MetricType;
  readonly options: MetricOptions;
  snapshot(): MetricSnapshot;
}

/** One series' labels by name, in declared label order. */
export type SnapshotLabels = Readonly<Record<string, string>>;

export interface NumberSeriesSnapshot {
  readonly labels: SnapshotLabels;
  readonly value: number;
}

export interface HistogramSeriesSnapshot {
  readonly labels: SnapshotLabels;
  /** Per-bucket (not cumulative) counts, one per bound plus `+Inf` last. */
  readonly counts: readonly number[];
  readonly sum: number;
  readonly count: number;
}

interface SnapshotBase {
  readonly name: string;
  readonly help: string;
}

/** A copy of one metric's current values, detached from the registry (later updates do not show). */
export type MetricSnapshot =
  | (SnapshotBase & { readonly type: 'counter'; readonly series: readonly NumberSeriesSnapshot[] })
  | (SnapshotBase & { readonly type: 'gauge'; readonly series: readonly NumberSeriesSnapshot[] })
  | (SnapshotBase & { readonly type: 'histogram'; readonly bounds: readonly number[]; readonly series: readonly HistogramSeriesSnapshot[] });

/**
 * The metrics recording API: counters, gauges and fixed-bucket histograms with labels, updated as
 * plain numbers on the hot path and readable back. Exporting is the OpenTelemetry SDK's job: the
 * registry is a MetricProducer for it (`RegistryProducer`). Snapshots list families in
 * registration order and series in first-use order, so exports are stable for tests and diffs.
 */
export class MetricsRegistry {
  private readonly families = new Map<string, Family>();

  counter(options: MetricOptions): Counter {
    const family = new SeriesFamily<{ value: number }>(options, () => ({ value: 0 }));
    this.register('counter', options, () => ({
      type: 'counter',
      name: options.name,
      help: options.help,
      series: family.map((labels, s) => ({ labels: labelRecord(labels), value: s.value })),
    }));
    return {
      inc(labels, value = 1) {
        if (!(value >= 0)) throw new MetricsError(`counter ${options.name} can only increase, got ${value}`);
        family.series(labels).value += value;
      },
      get: (labels) => family.peek(labels)?.value ?? 0,
    };
  }

  gauge(options: MetricOptions): Gauge {
    const family = new SeriesFamily<{ value: number }>(options, () => ({ value: 0 }));
    this.register('gauge', options, () => ({
      type: 'gauge',
      name: options.name,
      help: options.help,
      series: family.map((labels, s) => ({ labels: labelRecord(labels), value: s.value })),
    }));
    return {
      set(labels, value) {
        family.series(labels).value = value;
      },
      inc(labels, value = 1) {
        family.series(labels).value += value;
      },
      dec(labels, value = 1) {
        family.series(labels).value -= value;
      },
      get: (labels) => family.peek(labels)?.value ?? 0,
    };
  }

  histogram(options: HistogramOptions): Histogram {
    const bounds = [...options.buckets];
    bounds.forEach((bound, i) => {
      if (!Number.isFinite(bound)) throw new MetricsError(`histogram ${options.name}: bucket bounds must be finite, got ${bound}`);
      if (i > 0 && bound <= (bounds[i - 1] as number)) throw new MetricsError(`histogram ${options.name}: bucket bounds must increase strictly`);
    });
    if ((options.labelNames ?? []).includes('le')) throw new MetricsError(`histogram ${options.name}: label name "le" is reserved`);
    type State = { counts: number[]; sum: number; count: number };
    const family = new SeriesFamily<State>(options, () => ({ counts: new Array<number>(bounds.length + 1).fill(0), sum: 0, count: 0 }));
    this.register('histogram', options, () => ({
      type: 'histogram',
      name: options.name,
      help: options.help,
      bounds: [...bounds],
      series: family.map((labels, s) => ({ labels: labelRecord(labels), counts: [...s.counts], sum: s.sum, count: s.count })),
    }));
    return {
      observe(labels, value) {
        if (Number.isNaN(value)) throw new MetricsError(`histogram ${options.name}: cannot observe NaN`);
        const s = family.series(labels);
        // Buckets are upper-inclusive (`le`); values above the last bound land in +Inf only.
        const index = bounds.findIndex((bound) => value <= bound);
        s.counts[index === -1 ? bounds.length : index]! += 1;
        s.sum += value;
        s.count += 1;
      },
      get(labels) {
        const s = family.peek(labels);
        return s ? { buckets: [...s.counts], sum: s.sum, count: s.count } : { buckets: new Array<number>(bounds.length + 1).fill(0), sum: 0, count: 0 };
      },
    };
  }

  /** Every metric's current values: families in registration order, series in first-use order. */
  snapshot(): MetricSnapshot[] {
    return [...this.families.values()].map((family) => family.snapshot());
  }

  private register(type: MetricType, options: MetricOptions, snapshot: () => MetricSnapshot): void {
    if (!METRIC_NAME.test(options.name) || options.name.includes(DOUBLE_UNDERSCORE)) {
      throw new MetricsError(`invalid metric name "${options.name}": letters, digits and single underscores, not starting with a digit`);
    }
    if (type === 'counter' && !options.name.endsWith(COUNTER_SUFFIX)) throw new MetricsError(`counter ${options.name}: a counter's name ends in ${COUNTER_SUFFIX}`);
    if (options.help.trim() === '') throw new MetricsError(`metric ${options.name}: help text is required`);
    if (this.families.has(options.name)) throw new MetricsError(`metric ${options.name} is already registered`);
    const labelNames = options.labelNames ?? [];
    for (const label of labelNames) {
      if (!LABEL_NAME.test(label) || label.includes(DOUBLE_UNDERSCORE)) throw new MetricsError(`metric ${options.name}: invalid label name "${label}"`);
    }
    if (new Set(labelNames).size !== labelNames.length) throw new MetricsError(`metric ${options.name}: duplicate label names`);
    this.families.set(options.name, { type, options, snapshot });
  }
}

type LabelPairs = readonly (readonly [string, string])[];

/** The series of one metric, keyed by their label values in declared label order. */
/** Series by label value, one level per declared label; a leaf is the series (see `SeriesFamily.series`). */
type SeriesTree<S> = Map<string, SeriesTree<S>> | { labels: LabelPairs; state: S };

class SeriesFamily<S> {
  private readonly byKey = new Map<string, { labels: LabelPairs; state: S }>();
  private tree: SeriesTree<S> | undefined;
  private readonly labelNames: readonly string[];

  constructor(
    private readonly options: MetricOptions,
    private readonly create: () => S,
  ) {
    this.labelNames = options.labelNames ?? [];
    // A metric without labels has exactly one series and shows it (as 0) before first use.
    if (this.labelNames.length === 0) this.series(undefined);
  }

  series(labels: Labels | undefined): S {
    // Hot path (every lock operation updates a few series): walk a tree of label values, one
    // level per declared label, instead of validating and serialising the labels each time.
    const found = this.lookup(labels);
    if (found !== undefined) return found.state;
    const pairs = this.pairs(labels);
    const key = JSON.stringify(pairs.map(([, value]) => value));
    let entry = this.byKey.get(key);
    if (!entry) {
      entry = { labels: pairs, state: this.create() };
      this.byKey.set(key, entry);
    }
    this.remember(pairs, entry);
    return entry.state;
  }

  /** The series these labels name, if they were used before and name exactly the declared labels. */
  private lookup(labels: Labels | undefined): { labels: LabelPairs; state: S } | undefined {
    const given = labels ?? {};
    let count = 0;
    for (const name in given) if (Object.hasOwn(given, name)) count++;
    // Any other count means a missing or unknown label: the slow path says which.
    if (count !== this.labelNames.length) return undefined;
    let level: SeriesTree<S> | undefined = this.tree;
    for (const name of this.labelNames) {
      const value = given[name];
      if (value === undefined || !(level instanceof Map)) return undefined;
      level = level.get(String(value));
    }
    return level instanceof Map ? undefined : level;
  }

  private remember(pairs: LabelPairs, entry: { labels: LabelPairs; state: S }): void {
    if (pairs.length === 0) {
      this.tree = entry;
      return;
    }
    if (!(this.tree instanceof Map)) this.tree = new Map();
    let level = this.tree;
    pairs.forEach(([, value], i) => {
      if (i === pairs.length - 1) {
        level.set(value, entry);
        return;
      }
      let next = level.get(value);
      if (!(next instanceof Map)) level.set(value, (next = new Map()));
      level = next;
    });
  }

  peek(labels: Labels | undefined): S | undefined {
    return this.byKey.get(JSON.stringify(this.pairs(labels).map(([, value]) => value)))?.state;
  }

  map<T>(visit: (labels: LabelPairs, state: S) => T): T[] {
    return [...this.byKey.values()].map(({ labels, state }) => visit(labels, state));
  }

  private pairs(labels: Labels | undefined): LabelPairs {
    const given = labels ?? {};
    const unknown = Object.keys(given).filter((name) => !this.labelNames.includes(name));
    const missing = this.labelNames.filter((name) => !(name in given));
    if (unknown.length > 0 || missing.length > 0) {
      throw new MetricsError(
        `metric ${this.options.name} takes labels [${this.labelNames.join(', ')}]` +
          (unknown.length > 0 ? `; unknown: ${unknown.join(', ')}` : '') +
          (missing.length > 0 ? `; missing: ${missing.join(', ')}` : ''),
      );
    }
    return this.labelNames.map((name) => [name, String(given[name])] as const);
  }
}

function labelRecord(labels: LabelPairs): SnapshotLabels {
  return Object.fromEntries(labels);
}
