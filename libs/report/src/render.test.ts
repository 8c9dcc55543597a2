import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleReport, SAMPLE_FAULTS } from '../tests/support/sample-report.js';
import { faultLabel } from './charts.js';
import { escapeMarkup } from './escape.js';
import type { FaultReport } from './model.js';
import { renderFaultReport } from './render.js';
import { writeFaultReport } from './write.js';

const HOSTILE = `<script>alert("x")</script> & 'quoted'`;

/** The report with user-controlled strings that would break markup if not escaped. */
const hostileReport = (): FaultReport =>
  sampleReport({
    title: `run ${HOSTILE}`,
    command: `npx lockfabric chaos --target "${HOSTILE}"`,
    faults: [
      ...SAMPLE_FAULTS,
      { id: 'f4<', kind: 'partition', target: `compute-3 ${HOSTILE}`, startNs: SAMPLE_FAULTS[0]!.startNs + 1e8, endNs: SAMPLE_FAULTS[0]!.startNs + 2e8, note: HOSTILE },
    ],
    failuresByCode: { [`Weird<Error>`]: 1 },
    verdict: { safety: 'violation', liveness: 'ok', exitCode: 1, lines: [HOSTILE] },
  });

const decode = (text: string): string =>
  text.replace(/&(#(\d+)|#x([0-9a-f]+)|amp|lt|gt|quot|apos);/gi, (_, _e, dec?: string, hex?: string) => {
    if (dec) return String.fromCodePoint(Number(dec));
    if (hex) return String.fromCodePoint(parseInt(hex, 16));
    return { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&apos;': "'" }[_.toLowerCase()] as string;
  });

/** Content of the first group of a mark class (e.g. `mark-text role-mark`); Vega closes an empty one as `<g .../>`. */
const markGroup = (svg: string, markClass: string): string => new RegExp(`<g class="${markClass}[^"]*"[^>]*?(?:/>|>(.*?)</g>)`, 's').exec(svg)?.[1] ?? '';

/** Text of every `<text>` element in the first group of a mark class. */
function texts(svg: string, markClass: string): string[] {
  const group = markGroup(svg, markClass);
  return [...group.matchAll(/<text[^>]*>(.*?)<\/text>/gs)].map((m) => decode(m[1] as string));
}

/** Number of drawn items (paths) in the first group of a mark class. */
function markItems(svg: string, markClass: string): number {
  const group = markGroup(svg, markClass);
  return (group.match(/<path /g) ?? []).length;
}

describe('renderFaultReport', () => {
  it('draws both plots, with every fault window shaded and labelled by kind and target', async () => {
    const report = hostileReport();
    const { svgs } = await renderFaultReport(report);
    expect(svgs.map((s) => s.name)).toEqual(['throughput', 'latency']);
    for (const { svg } of svgs) {
      expect(svg.startsWith('<svg')).toBe(true);
      expect(texts(svg, 'mark-text role-mark').sort()).toEqual(report.faults.map(faultLabel).sort());
      expect(markItems(svg, 'mark-rect role-mark')).toBe(report.faults.length);
      expect(markItems(svg, 'mark-line role-mark')).toBeGreaterThan(0);
      expect(svg).not.toContain('<script');
    }
    // Clip paths are numbered per chart, so the page never holds one id twice.
    const ids = svgs.flatMap(({ svg }) => [...svg.matchAll(/<clipPath id="([^"]+)"/g)].map((m) => m[1]));
    expect(ids).toEqual(['throughput-clip0', 'throughput-clip1', 'latency-clip0', 'latency-clip1']);
    // One point per bucket on the throughput line.
    expect(markItems(svgs[0]!.svg, 'mark-symbol role-mark')).toBe(report.buckets.length);
  });

  it('labels an open fault window and shades it to the end of the run', async () => {
    const report = sampleReport({ faults: [{ id: 'o', kind: 'pause', target: 'compute-9', startNs: sampleReport().startNs + 9e9 }] });
    const { svgs } = await renderFaultReport(report);
    for (const { svg } of svgs) {
      expect(texts(svg, 'mark-text role-mark')).toEqual(['pause compute-9']);
      // The shading spans from 9 s to 10 s, i.e. the last tenth of the 760 px plot.
      const d = /<g class="mark-rect role-mark[^"]*"[^>]*><path [^>]*d="M([\d.]+),[\d.-]+h([\d.]+)/.exec(svg);
      expect(Number(d?.[1])).toBeCloseTo(684, 0);
      expect(Number(d?.[2])).toBeCloseTo(76, 0);
    }
  });

  it('escapes every string from the report in the page', async () => {
    const { html } = await renderFaultReport(hostileReport());
    expect(html).not.toContain(HOSTILE);
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toContain('Weird<Error>');
    expect(html).toContain(`<title>run ${escapeMarkup(HOSTILE)}</title>`);
    expect(html).toContain(`<td>${escapeMarkup(HOSTILE)}</td>`); // the note
    expect(html).toContain(`<td>compute-3 ${escapeMarkup(HOSTILE)}</td>`);
    expect(html).toContain(`<td>f4&lt;</td>`);
    expect(html).toContain(`<li>${escapeMarkup(HOSTILE)}</li>`);
    expect(html).toContain(`<code>npx lockfabric chaos --target &quot;${escapeMarkup(HOSTILE)}&quot;</code>`);
    expect(html).toContain('<code>Weird&lt;Error&gt;</code>');
  });

  it('is self-contained: no scripts, links, images or remote URLs beyond the SVG namespaces', async () => {
    const { html, svgs } = await renderFaultReport(sampleReport());
    expect(html).not.toMatch(/<(script|link|img|iframe|object|embed)\b/i);
    expect(html).not.toMatch(/\b(src|href)=/i);
    const urls = new Set(html.match(/https?:\/\/[^\s"')]+/g));
    expect([...urls].sort()).toEqual(['http://www.w3.org/1999/xlink', 'http://www.w3.org/2000/svg']);
    for (const { svg } of svgs) expect(html).toContain(svg);
  });

  it('puts the header first, then safety, then liveness, then the plots, faults and failures', async () => {
    const { html } = await renderFaultReport(sampleReport());
    const order = [
      '<h1>caslock under faults, seed 7</h1>',
      '<dt>protocol</dt><dd>caslock</dd>',
      '<dt>substrate</dt><dd>live</dd>',
      '<dt>seed</dt><dd>7</dd>',
      '<code>npx lockfabric chaos run --protocol caslock --seed 7</code>',
      '<div class="badge ok"><small>safety</small>ok</div>',
      '<div class="badge violation"><small>liveness</small>violation</div>',
      'exit code <code>3</code>',
      '<li>liveness: 1 acquire never completed (0/3 on lock 2)</li>',
      'id="plot-throughput"',
      'id="plot-latency"',
      '<table id="faults">',
      '<strong id="unknown-ops">2</strong>',
      '<table id="failures">',
    ].map((s) => html.indexOf(s));
    expect(order.every((i) => i >= 0)).toBe(true);
    expect(order).toEqual([...order].sort((a, b) => a - b));
  });

  it('lists each fault once with times relative to the run start, and failures by code, most first', async () => {
    const { html } = await renderFaultReport(sampleReport({ failuresByCode: { A: 2, C: 9, B: 2 } }));
    const rows = [...html.matchAll(/<tr class="fault">(.*?)<\/tr>/g)].map((m) => [...(m[1] as string).matchAll(/<td[^>]*>(.*?)<\/td>/g)].map((c) => c[1]));
    expect(rows).toEqual([
      ['f1', 'partition', 'compute-2', '3.000', '5.000', '420 ms', ''],
      ['f2', 'kill', 'memory-0', '6.500', '7.000', '800 ms', 'SIGKILL, restarted by the launcher'],
      ['f3', 'pause', 'compute-1', '8.500', 'open', '–', ''],
    ]);
    const codes = [...html.matchAll(/<tr><td><code>(\w+)<\/code><\/td><td class="num">(\d+)<\/td><\/tr>/g)].map((m) => `${m[1]}=${m[2]}`);
    expect(codes).toEqual(['C=9', 'A=2', 'B=2']);
  });

  it('says so when there were no faults and no failures', async () => {
    const { html, svgs } = await renderFaultReport(sampleReport({ faults: [], failuresByCode: {} }));
    expect(html).toContain('No faults were injected.');
    expect(html).toContain('No operation failed.');
    expect(html).not.toContain('<table');
    for (const { svg } of svgs) expect(markItems(svg, 'mark-rect role-mark')).toBe(0);
  });
});

describe('escapeMarkup', () => {
  it('escapes the five markup characters and nothing else', () => {
    expect(escapeMarkup(`a&b<c>d"e'f µ`)).toBe('a&amp;b&lt;c&gt;d&quot;e&#39;f µ');
  });
});

describe('writeFaultReport', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('writes report.html, report.json (the report itself) and the SVGs into a new directory', async () => {
    const root = await mkdtemp(join(tmpdir(), 'report-'));
    dirs.push(root);
    const dir = join(root, 'nested', 'run');
    const report = sampleReport();
    const paths = await writeFaultReport(report, dir);
    expect(paths).toEqual({ html: join(dir, 'report.html'), json: join(dir, 'report.json'), svgs: [join(dir, 'throughput.svg'), join(dir, 'latency.svg')] });
    expect(JSON.parse(await readFile(paths.json, 'utf8'))).toEqual({ kind: 'nemesis', version: 1, ...report });
    const rendered = await renderFaultReport(report);
    expect(await readFile(paths.html, 'utf8')).toBe(rendered.html);
    for (const [i, path] of paths.svgs.entries()) expect(await readFile(path, 'utf8')).toBe(rendered.svgs[i]!.svg);
  });
});
