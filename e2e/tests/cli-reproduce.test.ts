import { describe, expect, it } from 'vitest';
import { runCli } from './cli.js';

// `lockfabric reproduce` as a user runs it, on sim: the experiments that carry each paper's
// headline claims at --quick scale, every other experiment at the test-only --smoke scale (all of
// --quick takes about 106 s of CPU, too long for CI). The claims table is well-formed and every
// headline comparison whose paper effect is at least 1.5× points the paper's way, except the ones
// listed below with the mechanism we believe.

interface Claim { id: string; text: string; paper: number; ours: number; unit: string; sameDirection: boolean; deviation: number; verdict: string; note?: string }
interface Experiment { id: string; figure: string; params: Record<string, unknown>; series: { name: string; points: { x: number; y: number }[] }[]; paperSeries: unknown[]; claims: Claim[]; x: { field: string }; y: { field: string } }
interface Result { kind: string; version: number; quick: boolean; startedAt: string; wallMs: number; papers: { paper: string; title: string; experiments: Experiment[] }[] }

/**
 * Headline claims (≥ 1.5×) that come out the other way at --smoke, with why (the same text is the
 * claim's note in the result). Each is a finding, not a tolerance: see docs/cli.md.
 */
const KNOWN_OPPOSITE: Readonly<Record<string, string>> = {
  // Under the paper cost model (docs/cost-model.md) both locks meet the memory node's atomic
  // ceiling at about two atomics per cycle; under --cost-model ideal ShiftLock leads.
  'shiftlock-fig4/vs-mcs-wi': 'both at the memory node NIC atomic ceiling; MCS hands over by CN-CN message',
  'shiftlock-fig4/vs-mcs-ri': 'the same',
  'shiftlock-fig5-p99/p99-vs-mcs-ri': 'the same',
  'shiftlock-fig7-locks/over-best-1k': 'the same, MCS is the best baseline',
  'dslr-fig8-tpcc/high-vs-retry': "DSLR's tickets and polls take the NIC ceiling as Retry-on-Fail's CAS retries do",
  'declock-fig13-p99/p99-vs-shiftlock': 'both near the NIC ceiling with few verbs per acquire; tails close',
  'shiftlock-table4-breakdown/ia-dslr': "DSLR's READ polls do not slow its FAA here (ours ≈ 0.85×)",
  'fisslock-tpcc-latency/tpcc-parlock-latency': "mean acquire latency, not NEW/PAY transaction latency; ParLock's home requests queue on its node's one lock-manager core",
};

/**
 * The experiments that carry each paper's headline claims, run at --quick in CI (about 45 s of CPU
 * of the ~106 s that `reproduce all --quick` takes; the rest runs at --smoke above and at --quick
 * locally). ShiftLock's goodput claims against MCS come out the other way under the paper cost
 * model (KNOWN_OPPOSITE), so its Table 4 carries its headline here.
 */
const QUICK_HEADLINE = [
  'fisslock-fig13-grant',
  'fisslock-fig13-grant-p90',
  'fisslock-fig14-throughput',
  'fisslock-tatp',
  'shiftlock-table4-breakdown',
  'dslr-fig14-tail',
  'dslr-fig14-throughput',
  'declock-fig12-clients',
  'declock-fig12-cs',
  'declock-fig13-p99',
  'alock-local-fraction',
  'alock-local-verbs',
] as const;

/** Headline claims of QUICK_HEADLINE that come out the other way at --quick (the claim's note says why). */
const QUICK_KNOWN_OPPOSITE: Readonly<Record<string, string>> = {
  'shiftlock-table4-breakdown/ia-dslr': KNOWN_OPPOSITE['shiftlock-table4-breakdown/ia-dslr']!,
  'declock-fig13-p99/p99-vs-shiftlock': KNOWN_OPPOSITE['declock-fig13-p99/p99-vs-shiftlock']!,
};

/** The paper's effect as a factor: a ratio as it is, a reduction r % as 1 / (1 − r). */
const effect = (c: Claim) => (c.unit === '×' ? Math.max(c.paper, 1 / c.paper) : 1 / (1 - c.paper / 100));

async function reproduce(args: readonly string[], scale: '--smoke' | '--quick' = '--smoke'): Promise<{ code: number | null; result: Result; stderr: string }> {
  const { code, stdout, stderr } = await runCli(['reproduce', ...args, scale, '--json']);
  return { code, result: JSON.parse(stdout) as Result, stderr };
}

/**
 * Checks a result's claims table and returns its headline claims (paper effect ≥ 1.5×): every one
 * points the paper's way unless `knownOpposite` names it.
 */
function checkClaims(result: Result, knownOpposite: Readonly<Record<string, string>>): string[] {
  const headline: string[] = [];
  for (const paper of result.papers) {
    expect(paper.experiments.length).toBeGreaterThan(0);
    for (const e of paper.experiments) {
      expect(e.id.startsWith(`${paper.paper}-`)).toBe(true);
      expect(e.params['checkerFailed'], `${e.id}: a run's history failed the checker`).toBeUndefined();
      expect(e.params['skipped'], e.id).toBeUndefined(); // every system the experiment names is in this build
      expect(e.series.length).toBeGreaterThanOrEqual(2);
      for (const s of e.series) for (const pt of s.points) expect(Number.isFinite(pt.y), `${e.id} ${s.name}`).toBe(true);
      expect(e.claims.length).toBeGreaterThan(0);
      for (const c of e.claims) {
        const key = `${e.id}/${c.id}`;
        expect(Number.isFinite(c.ours), key).toBe(true);
        expect(c.deviation).toBeCloseTo(c.ours / c.paper - 1, 9);
        const neutral = c.unit === '×' ? 1 : 0;
        expect(c.sameDirection, key).toBe(Math.sign(c.ours - neutral) === Math.sign(c.paper - neutral));
        expect(c.verdict, key).toBe(!c.sameDirection ? 'opposite' : Math.abs(c.deviation) <= 0.25 ? 'reproduced' : 'same-direction');
        if (c.verdict !== 'reproduced') expect(c.note, `${key} needs the mechanism we believe`).toBeTruthy();
        if (effect(c) >= 1.5) {
          headline.push(key);
          if (!(key in knownOpposite)) expect(c.sameDirection, `${key}: paper ${c.paper}${c.unit}, ours ${c.ours}`).toBe(true);
        }
      }
    }
  }
  return headline;
}

describe('lockfabric reproduce', () => {
  it('reproduces every other experiment at smoke scale: a well-formed claims table, headline directions as the papers report', async () => {
    // The experiments the --quick test below runs are left out here (CI time).
    const list = await runCli(['reproduce', '--list']);
    expect(list.code, list.stderr).toBe(0);
    const others = list.stdout.split('\n').map((line) => line.split(' ')[0]!).filter((id) => id && !(QUICK_HEADLINE as readonly string[]).includes(id));
    expect(others.length).toBeGreaterThanOrEqual(7);
    const { code, result, stderr } = await reproduce(['all', ...others.flatMap((id) => ['--figure', id]), '--workers', '2']);
    expect(code, stderr).toBe(0);
    expect(result).toMatchObject({ kind: 'reproduce', version: 1, quick: true });
    expect(result.papers.map((p) => p.paper)).toEqual(['fisslock', 'shiftlock', 'dslr', 'declock']);
    expect(result.papers.flatMap((p) => p.experiments.map((e) => e.id))).toEqual(others);
    const headline = checkClaims(result, KNOWN_OPPOSITE);
    const fig4 = result.papers[1]!.experiments.find((e) => e.id === 'shiftlock-fig4')!;
    expect(fig4.series.map((s) => s.name)).toContain('RMA-RW');
    console.log(`reproduce --smoke: ${headline.length} headline claims (≥ 1.5×), ${headline.filter((k) => k in KNOWN_OPPOSITE).length} known opposite; wall ${Math.round(result.wallMs)} ms`);
    expect(headline.length).toBeGreaterThanOrEqual(8);
  }, 300_000);

  it('runs the headline experiments of every paper at --quick scale, headline directions as the papers report', async () => {
    const figures = QUICK_HEADLINE.flatMap((id) => ['--figure', id]);
    const { code, result, stderr } = await reproduce(['all', ...figures, '--workers', '2'], '--quick');
    expect(code, stderr).toBe(0);
    expect(result).toMatchObject({ kind: 'reproduce', version: 1, quick: true });
    expect(result.papers.map((p) => p.paper)).toEqual(['fisslock', 'shiftlock', 'dslr', 'declock', 'alock']);
    const experiments = result.papers.flatMap((p) => p.experiments);
    expect(experiments.map((e) => e.id).sort()).toEqual([...QUICK_HEADLINE].sort());
    for (const e of experiments) expect(e.params['scale'], e.id).toBe('quick');
    const headline = checkClaims(result, QUICK_KNOWN_OPPOSITE);
    const lines = experiments.flatMap((e) => e.claims.filter((c) => effect(c) >= 1.5).map((c) => `${e.id}/${c.id} paper ${c.paper}${c.unit} ours ${c.ours.toFixed(2)}${c.unit} ${c.verdict}`));
    console.log(`reproduce --quick (headline experiments): ${headline.length} headline claims, ${headline.filter((k) => k in QUICK_KNOWN_OPPOSITE).length} known opposite\n  ${lines.join('\n  ')}`);
    expect(headline.length).toBeGreaterThanOrEqual(18);

    // Mutant: the same table with FissLock's grant-time lead turned into a loss (a consistent
    // 'opposite' row) must fail the direction check.
    const mutant = structuredClone(result);
    const claim = mutant.papers[0]!.experiments.find((e) => e.id === 'fisslock-fig13-grant')!.claims[0]!;
    Object.assign(claim, { ours: -claim.ours, deviation: -claim.ours / claim.paper - 1, sameDirection: false, verdict: 'opposite', note: 'mutant' });
    expect(() => checkClaims(mutant, QUICK_KNOWN_OPPOSITE)).toThrow(/fisslock-fig13-grant\/p50-vs-srvlock/);
  }, 600_000);

  it('gives the same result for any worker count, and --figure runs one experiment', async () => {
    const one = await reproduce(['alock', '--figure', 'alock-local-fraction', '--workers', '1']);
    const two = await reproduce(['alock', '--figure', 'alock-local-fraction', '--workers', '2']);
    expect(one.code, one.stderr).toBe(0);
    const strip = (r: Result) => r.papers.map((p) => p.experiments.map((e) => ({ ...e, wallMs: 0 })));
    expect(strip(two.result)).toEqual(strip(one.result));
    expect(one.result.papers.flatMap((p) => p.experiments.map((e) => e.id))).toEqual(['alock-local-fraction']);
  }, 120_000);

  it('lists every problem with the command line and exits 2', async () => {
    const { code, stdout, stderr } = await runCli(['reproduce', 'nopaper', '--workers', '0', '--figure', 'nofig']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/unknown paper "nopaper"/);
    expect(stderr).toMatch(/--workers: expected an integer ≥ 1/);
    expect(stderr).toMatch(/--figure: no experiment "nofig"/);
    expect(stderr).not.toMatch(/at .*\.js:\d+/);
  });
});
