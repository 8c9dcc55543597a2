import { describe, expect, it } from 'vitest';
import { MetricsRegistry } from './metrics.js';
import { renderPrometheusText } from './prometheus-metrics.js';
import { PrometheusFormatError, parsePrometheusText, sumSamples } from './prometheus-parse.js';

function sampleRegistry(): MetricsRegistry {
  const registry = new MetricsRegistry();
  const verbs = registry.counter({ name: 'lf_verbs_total', help: 'Verbs "served"\nby op', labelNames: ['op'] });
  const grant = registry.histogram({ name: 'lf_grant_seconds', help: 'Grant time', labelNames: ['protocol'], buckets: [0.001, 0.01] });
  registry.gauge({ name: 'lf_up', help: 'Up' }).set(undefined, 1);
  verbs.inc({ op: 'cas' }, 3);
  verbs.inc({ op: 'odd "x"\\\n' });
  grant.observe({ protocol: 'caslock' }, 0.0005);
  grant.observe({ protocol: 'caslock' }, 7);
  return registry;
}

const good = await renderPrometheusText(sampleRegistry());

describe('parsePrometheusText', () => {
  it('reads what /metrics serves of a registry: types, help, escaped labels, histogram series', () => {
    const families = parsePrometheusText(good);
    expect([...families.keys()]).toEqual(['lf_verbs_total', 'lf_grant_seconds', 'lf_up']);
    expect(families.get('lf_verbs_total')).toMatchObject({ type: 'counter', help: 'Verbs "served"\nby op' });
    expect(sumSamples(families, 'lf_verbs_total', { op: 'odd "x"\\\n' })).toBe(1);
    expect(sumSamples(families, 'lf_verbs_total')).toBe(4);
    expect(sumSamples(families, 'lf_grant_seconds_bucket', { le: '+Inf' })).toBe(2);
    expect(sumSamples(families, 'lf_grant_seconds_count', { protocol: 'caslock' })).toBe(2);
    expect(families.get('lf_grant_seconds')?.samples).toHaveLength(5);
  });

  it('accepts comments, blank lines, timestamps, NaN and ±Inf values', () => {
    const text = '# a comment\n\n# TYPE x gauge\nx{a="1"} NaN 1700000000000\nx{a="2"} -Inf\ny +Inf\n';
    const families = parsePrometheusText(text);
    expect(families.get('x')?.samples.map((s) => s.value)).toEqual([Number.NaN, Number.NEGATIVE_INFINITY]);
    expect(families.get('y')?.type).toBe('untyped');
  });

  const broken: [string, string, RegExp][] = [
    ['a non-numeric value', good.replace('lf_up 1', 'lf_up one'), /not a float/],
    ['a bad label escape', 'x{a="\\t"} 1\n', /bad escape/],
    ['an unterminated label value', 'x{a="1} 1\n', /unterminated|expected/],
    ['a missing space before the value', 'x{a="1"}1\n', /value/],
    ['a bad metric name', '# TYPE 1x counter\n', /invalid metric name/],
    ['an unknown type', '# TYPE x countr\n', /unknown type/],
    ['a TYPE after samples', 'x 1\n# TYPE x counter\n', /before its samples/],
    ['a family split in two', 'x 1\ny 1\nx{a="b"} 2\n', /appears again/],
    ['a duplicate series', 'x{a="1",b="2"} 1\nx{b="2",a="1"} 1\n', /duplicate series/],
    ['a negative counter', '# TYPE x counter\nx -1\n', /counter x is -1/],
    ['non-cumulative buckets', good.replace('lf_grant_seconds_bucket{protocol="caslock",le="0.01"} 1', 'lf_grant_seconds_bucket{protocol="caslock",le="0.01"} 0'), /not cumulative/],
    ['+Inf bucket differing from _count', good.replace('lf_grant_seconds_count{protocol="caslock"} 2', 'lf_grant_seconds_count{protocol="caslock"} 3'), /differs from _count/],
    ['a histogram without +Inf', good.replace(/^lf_grant_seconds_bucket\{protocol="caslock",le="\+Inf"\} 2\n/m, ''), /no \+Inf bucket/],
    ['no final line feed', 'x 1', /line feed/],
  ];
  it.each(broken)('rejects %s', (_, text, message) => {
    expect(() => parsePrometheusText(text)).toThrow(PrometheusFormatError);
    expect(() => parsePrometheusText(text)).toThrow(message);
  });

  it('the broken inputs differ from the valid one (each mutant really changed something)', () => {
    for (const [what, text] of broken) expect(text, what).not.toBe(good);
  });
});
