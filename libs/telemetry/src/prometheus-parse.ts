import { LockFabricError } from '@lockfabric/ports';

/** A scrape that is not valid Prometheus text exposition format 0.0.4; names the line. */
export class PrometheusFormatError extends LockFabricError {
  readonly code = 'PROMETHEUS_FORMAT';
}

export type PrometheusType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface PrometheusSample {
  /** Series name as written (`x_bucket`, `x_sum`, …). */
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface PrometheusFamily {
  readonly name: string;
  readonly type: PrometheusType;
  readonly help: string | undefined;
  readonly samples: readonly PrometheusSample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const FLOAT = /^[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|Inf|inf)$|^NaN$/;
const TYPES = new Set<string>(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const SUFFIXES: Readonly<Record<string, readonly string[]>> = { histogram: ['_bucket', '_sum', '_count'], summary: ['_sum', '_count'] };

interface MutableFamily {
  name: string;
  type: PrometheusType;
  help: string | undefined;
  samples: PrometheusSample[];
  closed: boolean;
}

/**
 * Parses and validates Prometheus text format 0.0.4, strictly enough to catch what a scraper
 * would reject or misread: bad names, label syntax and escapes, non-numeric values, duplicate or
 * late TYPE/HELP lines, a family's samples split apart, duplicate series, negative counters, and
 * histograms whose buckets are not cumulative or whose `+Inf` bucket differs from `_count`.
 */
export function parsePrometheusText(text: string): Map<string, PrometheusFamily> {
  const families = new Map<string, MutableFamily>();
  const seriesSeen = new Set<string>();
  let current: MutableFamily | undefined;
  const lines = text.split('\n');
  if (text !== '' && !text.endsWith('\n')) throw new PrometheusFormatError(`the exposition must end with a line feed`);

  const familyOf = (name: string, line: number): MutableFamily => {
    let family = families.get(name);
    if (!family) {
      family = { name, type: 'untyped', help: undefined, samples: [], closed: false };
      families.set(name, family);
    }
    if (family.closed) throw new PrometheusFormatError(`line ${line}: ${name} appears again after another family`);
    if (current !== family) {
      if (current) current.closed = true;
      current = family;
    }
    return family;
  };

  lines.forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === '') return;
    if (raw.startsWith('#')) {
      const match = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s(.*))?$/.exec(raw);
      if (!match) return; // any other comment is allowed
      const [, keyword, name = '', rest = ''] = match;
      if (!METRIC_NAME.test(name) || METRIC_NAME.exec(name)?.[0] !== name) throw new PrometheusFormatError(`line ${line}: invalid metric name "${name}"`);
      const family = familyOf(name, line);
      if (keyword === 'HELP') {
        if (family.help !== undefined) throw new PrometheusFormatError(`line ${line}: second HELP for ${name}`);
        family.help = unescapeHelp(rest, line);
      } else {
        const type = rest.trim();
        if (!TYPES.has(type)) throw new PrometheusFormatError(`line ${line}: unknown type "${type}" for ${name}`);
        if (family.samples.length > 0 || family.type !== 'untyped') throw new PrometheusFormatError(`line ${line}: TYPE of ${name} must come once, before its samples`);
        family.type = type as PrometheusType;
      }
      return;
    }
    const sample = parseSample(raw, line);
    const family = familyOf(familyName(sample.name, current, families), line);
    if (family.type === 'counter' && !(sample.value >= 0)) throw new PrometheusFormatError(`line ${line}: counter ${sample.name} is ${sample.value}`);
    const key = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort(([a], [b]) => (a < b ? -1 : 1)))}`;
    if (seriesSeen.has(key)) throw new PrometheusFormatError(`line ${line}: duplicate series ${sample.name}`);
    seriesSeen.add(key);
    family.samples.push(sample);
  });

  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return new Map([...families].map(([name, f]) => [name, { name, type: f.type, help: f.help, samples: f.samples }]));
}

/** Sum of the values of `series` whose labels include all of `match`. */
export function sumSamples(families: ReadonlyMap<string, PrometheusFamily>, series: string, match: Readonly<Record<string, string>> = {}): number {
  let sum = 0;
  for (const family of families.values()) {
    for (const sample of family.samples) {
      if (sample.name !== series) continue;
      if (Object.entries(match).every(([k, v]) => sample.labels[k] === v)) sum += sample.value;
    }
  }
  return sum;
}

/** A `_bucket`/`_sum`/`_count` sample belongs to the histogram or summary declared under its base name. */
function familyName(series: string, current: MutableFamily | undefined, families: ReadonlyMap<string, MutableFamily>): string {
  for (const [type, suffixes] of Object.entries(SUFFIXES)) {
    for (const suffix of suffixes) {
      if (!series.endsWith(suffix)) continue;
      const base = series.slice(0, -suffix.length);
      const family = families.get(base);
      if (family?.type === type && (family === current || !family.closed)) return base;
    }
  }
  return series;
}

function parseSample(raw: string, line: number): PrometheusSample {
  const fail = (what: string): never => {
    throw new PrometheusFormatError(`line ${line}: ${what}: ${JSON.stringify(raw)}`);
  };
  const name = METRIC_NAME.exec(raw)?.[0] ?? fail('no metric name');
  let rest = raw.slice(name.length);
  const labels: Record<string, string> = {};
  if (rest.startsWith('{')) {
    rest = rest.slice(1);
    for (;;) {
      rest = rest.replace(/^[ \t]*/, '');
      if (rest.startsWith('}')) break;
      const label = LABEL_NAME.exec(rest)?.[0] ?? fail('bad label name');
      rest = rest.slice(label.length).replace(/^[ \t]*/, '');
      if (!rest.startsWith('="')) fail(`label ${label} needs ="value"`);
      rest = rest.slice(2);
      let value = '';
      for (;;) {
        const ch = rest[0] ?? fail(`unterminated value of label ${label}`);
        rest = rest.slice(1);
        if (ch === '"') break;
        if (ch === '\n') fail('line feed in a label value');
        if (ch !== '\\') {
          value += ch;
          continue;
        }
        const escaped = rest[0];
        rest = rest.slice(1);
        if (escaped === '\\') value += '\\';
        else if (escaped === '"') value += '"';
        else if (escaped === 'n') value += '\n';
        else fail(`bad escape \\${String(escaped)} in label ${label}`);
      }
      if (label in labels) fail(`label ${label} given twice`);
      labels[label] = value;
      rest = rest.replace(/^[ \t]*/, '');
      if (rest.startsWith(',')) rest = rest.slice(1);
      else if (!rest.startsWith('}')) fail('expected , or } after a label');
    }
    rest = rest.slice(1);
  }
  const parts = rest.trim().split(/[ \t]+/);
  if (!/^[ \t]/.test(rest) || parts.length < 1 || parts.length > 2) fail('expected " value [timestamp]"');
  const valueText = parts[0] ?? '';
  if (!FLOAT.test(valueText)) fail(`value "${valueText}" is not a float`);
  if (parts[1] !== undefined && !/^-?\d+$/.test(parts[1])) fail(`timestamp "${parts[1]}" is not an integer`);
  return { name, labels, value: parseFloatText(valueText) };
}

function parseFloatText(text: string): number {
  if (/^[+]?[Ii]nf$/.test(text)) return Number.POSITIVE_INFINITY;
  if (/^-[Ii]nf$/.test(text)) return Number.NEGATIVE_INFINITY;
  return Number(text);
}

function unescapeHelp(text: string, line: number): string {
  return text.replace(/\\(.?)/g, (_, ch: string) => {
    if (ch === '\\') return '\\';
    if (ch === 'n') return '\n';
    throw new PrometheusFormatError(`line ${line}: bad escape \\${ch} in HELP`);
  });
}

function checkHistogram(family: MutableFamily): void {
  const bySeries = new Map<string, { buckets: [number, number][]; count?: number; sum?: number }>();
  for (const sample of family.samples) {
    const { le, ...rest } = sample.labels;
    const key = JSON.stringify(Object.entries(rest).sort(([a], [b]) => (a < b ? -1 : 1)));
    const entry = bySeries.get(key) ?? { buckets: [] };
    bySeries.set(key, entry);
    if (sample.name === `${family.name}_bucket`) {
      if (le === undefined) throw new PrometheusFormatError(`${family.name}_bucket without an le label`);
      if (!FLOAT.test(le)) throw new PrometheusFormatError(`${family.name}_bucket le="${le}" is not a float`);
      entry.buckets.push([parseFloatText(le), sample.value]);
    } else if (sample.name === `${family.name}_count`) entry.count = sample.value;
    else if (sample.name === `${family.name}_sum`) entry.sum = sample.value;
    else throw new PrometheusFormatError(`histogram ${family.name} has a sample named ${sample.name}`);
  }
  for (const [key, entry] of bySeries) {
    const where = `histogram ${family.name}${key === '[]' ? '' : ` ${key}`}`;
    const sorted = [...entry.buckets].sort(([a], [b]) => a - b);
    sorted.forEach(([, count], i) => {
      if (i > 0 && count < sorted[i - 1]![1]) throw new PrometheusFormatError(`${where}: buckets are not cumulative`);
    });
    const inf = sorted.at(-1);
    if (!inf || inf[0] !== Number.POSITIVE_INFINITY) throw new PrometheusFormatError(`${where}: no +Inf bucket`);
    if (entry.count === undefined || entry.sum === undefined) throw new PrometheusFormatError(`${where}: needs _sum and _count`);
    if (inf[1] !== entry.count) throw new PrometheusFormatError(`${where}: +Inf bucket ${inf[1]} differs from _count ${entry.count}`);
  }
}
