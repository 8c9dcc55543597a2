import { ConfigError } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { sampleDemo } from '../tests/support/sample-comparison.js';
import { sampleReport } from '../tests/support/sample-report.js';
import { sampleReproduce } from '../tests/support/sample-reproduce.js';
import { parseReport, renderReport } from './load.js';

function problems(text: string): string[] {
  try {
    parseReport(text, 'r.json');
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return [...(error as ConfigError).issues];
  }
  throw new Error('parseReport accepted it');
}

describe('parseReport', () => {
  it('tells every kind by its kind field, and an old nemesis report by its buckets and faults', () => {
    expect(parseReport(JSON.stringify(sampleDemo())).kind).toBe('demo');
    expect(parseReport(JSON.stringify({ ...sampleDemo(), kind: 'bench', title: 't' })).kind).toBe('bench');
    expect(parseReport(JSON.stringify(sampleReproduce())).kind).toBe('reproduce');
    const legacy = parseReport(JSON.stringify(sampleReport()));
    expect(legacy.kind).toBe('nemesis');
  });

  it('rejects what is not JSON, not an object, or of an unknown kind', () => {
    expect(problems('{"kind":')[0]).toMatch(/^r\.json: not JSON/);
    expect(problems('[1,2]')[0]).toMatch(/expected a JSON object/);
    expect(problems('{"kind":"pie"}')).toEqual(['r.json: unknown report kind "pie"; expected one of nemesis, bench, demo, reproduce']);
    expect(problems('{"title":"x"}')[0]).toMatch(/unknown report kind null/);
  });

  it('lists every broken field of a report, with its path', () => {
    const broken = sampleReproduce() as unknown as { papers: { experiments: Record<string, unknown>[] }[] };
    const e = broken.papers[0]!.experiments[0]!;
    e['x'] = { field: 'clients', label: 'clients', scale: 'cubic' };
    (e['claims'] as Record<string, unknown>[])[0]!['verdict'] = 'maybe';
    delete e['series'];
    const lines = problems(JSON.stringify(broken));
    expect(lines).toHaveLength(3);
    expect(lines.some((l) => l.includes('papers.0.experiments.0.x.scale'))).toBe(true);
    expect(lines.some((l) => l.includes('papers.0.experiments.0.claims.0.verdict'))).toBe(true);
    expect(lines.some((l) => l.includes('papers.0.experiments.0.series'))).toBe(true);
    expect(lines.every((l) => l.startsWith('r.json (reproduce): '))).toBe(true);
  });

  it('rejects a demo row without its figures', () => {
    const demo = sampleDemo();
    const lines = problems(JSON.stringify({ ...demo, results: [{ ...demo.results[0], throughput: 'fast' }] }));
    expect(lines).toEqual([expect.stringContaining('results.0.throughput')]);
  });
});

describe('rendered pages', () => {
  it('a demo page has one table row per protocol, with the checker verdict and the switch share', async () => {
    const demo = sampleDemo();
    const bad = { ...demo, results: [...demo.results, { ...demo.results[0]!, protocol: 'broken', verdict: undefined, violations: 2 }] };
    const { html, svgs } = await renderReport(parseReport(JSON.stringify(bad)));
    expect(html.match(/<tr class="result">/g)).toHaveLength(demo.results.length + 1);
    expect(html.match(/<td class="verdict-ok">ok<\/td>/g)).toHaveLength(demo.results.length);
    expect(html).toContain('<td class="verdict-violation">violation</td>');
    expect(html).toContain('62.0 %');
    expect(svgs.map((s) => s.name)).toEqual(['latency-cdf', 'throughput', 'verbs', 'switch-share']);
    expect(html).not.toMatch(/<script/i);
  });

  it('a reproduce page has a plot per experiment and a claims row per claim, with its verdict', async () => {
    const result = sampleReproduce();
    const { html, svgs } = await renderReport(result);
    expect(svgs.map((s) => s.name)).toEqual(['experiment-declock-fig9', 'experiment-dslr-fig6']);
    expect(html.match(/<tr class="claim">/g)).toHaveLength(3);
    for (const verdict of ['reproduced', 'same-direction', 'opposite']) expect(html).toContain(`<td class="verdict-${verdict}">${verdict}</td>`);
    expect(html).toContain('1 reproduced, 1 same direction, 1 opposite');
    expect(html).toContain('The paper gives no points to overlay.');
  });

  it('escapes every string of the JSON: hostile names, titles and notes stay text', async () => {
    const hostile = '<script>alert(1)</script>&"\'';
    const demo = sampleDemo({ substrate: hostile, workload: { note: hostile } });
    const rows = demo.results.map((r, i) => (i === 0 ? { ...r, protocol: hostile } : r));
    const result = sampleReproduce();
    const paper = result.papers[0]!;
    const e = paper.experiments[0]!;
    const reproduce = { ...result, papers: [{ ...paper, title: hostile, experiments: [{ ...e, id: hostile, figure: hostile, claims: [{ ...e.claims[0]!, text: hostile, note: hostile }] }] }] };
    for (const report of [{ ...demo, results: rows }, reproduce]) {
      const { html, svgs } = await renderReport(report);
      expect(html).not.toContain('<script');
      expect(html).toContain('&lt;script&gt;');
      for (const s of svgs) expect(s.svg).not.toContain('<script');
    }
  });
});
