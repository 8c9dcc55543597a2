import { describe, expect, it } from 'vitest';
import { runCli } from './cli.js';

// `lockfabric check --swarm` as a user runs it: every protocol over a few hundred seeds of its own
// fault mix, a planted mutant per family caught (exit 1), replay and worker-count independence.
const SEEDS_PER_PROTOCOL = 200;


interface SwarmJson {
  readonly seeds: number;
  readonly workers: number;
  readonly protocols: readonly { protocol: string; seeds: number; failing: number; digest: string; simEvents: number }[];
  readonly failures: readonly { protocol: string; seed: number; kind: string; mix: string; reproduce: string }[];
}

async function swarm(args: readonly string[]): Promise<{ code: number | null; json: SwarmJson; stderr: string }> {
  const { code, stdout, stderr } = await runCli(['check', '--swarm', '--json', ...args]);
  return { code, json: JSON.parse(stdout) as SwarmJson, stderr };
}

describe('lockfabric check --swarm', () => {
  it(`passes every protocol over ${SEEDS_PER_PROTOCOL} seeds of its fault mix`, async () => {
    const { code, json, stderr } = await swarm(['--protocol', 'all', '--seeds', String(SEEDS_PER_PROTOCOL), '--workers', '2']);
    expect(json.failures, stderr).toEqual([]);
    expect(code).toBe(0);
    expect(json.protocols.map((p) => p.protocol).sort()).toEqual(
      ['alock', 'caslock', 'declock', 'declock-cql', 'drtm', 'dslr', 'dslr-backoff', 'fisslock', 'mcs', 'ncosed', 'netlock', 'parlock', 'rma-rw', 'rpc', 'sherman', 'shiftlock', 'srvlock', 'traditional', 'traditional-ro'],
    );
    for (const p of json.protocols) {
      expect(p.seeds).toBe(SEEDS_PER_PROTOCOL);
      expect(p.simEvents).toBeGreaterThan(0);
    }
  }, 900_000);

  // One planted mutant per family: CAS spin, lease, handover, queue-notify (two), MCS queue,
  // cohort, lock server and switch (FissLock re-processing duplicated packets, which its `lossy`
  // profile draws: docs/decisions/0005).
  const MUTANTS: readonly (readonly [string, string, number?])[] = [
    ['caslock', 'mutantSkipCompare'],
    ['drtm', 'mutantWriterIgnoresLease'],
    ['shiftlock', 'mutantSkipReaderWait'],
    ['declock', 'mutantReaderGrant'],
    ['declock-cql', 'mutantReaderGrant'],
    ['mcs', 'mutantSkipNodeReset'],
    ['alock', 'mutantSkipPeterson'],
    ['srvlock', 'mutantReleaseAllHolders'],
    ['fisslock', 'mutantNoDuplicateSuppression', 20], // seed 18 loses exclusion
  ];
  for (const [protocol, mutant, seeds = 40] of MUTANTS) {
    it(`catches ${protocol} ${mutant} (exit 1) and prints a reproduction`, async () => {
      const { code, json } = await swarm(['--protocol', protocol, '--seeds', String(seeds), '--workers', '2', '--opt', `${mutant}=true`]);
      expect(code).toBe(1);
      const safety = json.failures.filter((f) => f.kind === 'safety');
      expect(safety.length).toBeGreaterThan(0);
      expect(safety[0]!.reproduce).toBe(`lockfabric check --swarm --protocol ${protocol} --first-seed ${safety[0]!.seed} --seeds 1 --opt ${mutant}=true`);
      const replay = await swarm(safety[0]!.reproduce.split(' ').slice(2));
      expect(replay.code).toBe(1);
      expect(replay.json.failures[0]!.mix).toBe(safety[0]!.mix);
    }, 300_000);
  }

  // FissLock-Local is fisslock --opt placement=home: its own seeds pass, and breaking its Lemma 1
  // rule (a parked agent changes mode without the switch) loses exclusion (seed 9 of these 4).
  it('fisslock placement=home (FissLock-Local) passes 10 seeds; its mutant mutantParkedModeChange is caught', async () => {
    const pass = await swarm(['--protocol', 'fisslock', '--seeds', '10', '--workers', '2', '--opt', 'placement=home']);
    expect(pass.json.failures, pass.stderr).toEqual([]);
    expect(pass.code).toBe(0);
    const broken = await swarm(['--protocol', 'fisslock', '--first-seed', '9', '--seeds', '4', '--workers', '2', '--opt', 'placement=home', '--opt', 'mutantParkedModeChange=true']);
    expect(broken.code).toBe(1);
    expect(broken.json.failures.filter((f) => f.kind === 'safety').length).toBeGreaterThan(0);
  }, 300_000);

  it('clock skew is a real fault: drtm claiming no skew (driftNs=0) on a 5 µs margin loses exclusion, with its Δ it does not', async () => {
    const skewBlind = await swarm(['--protocol', 'drtm', '--seeds', '100', '--workers', '2', '--opt', 'driftNs=0', '--opt', 'txMarginNs=5000']);
    expect(skewBlind.code).toBe(1);
    expect(skewBlind.json.failures[0]!.mix).toMatch(/clocks=-?\d+ppm[+-][\d.]+us/);
    const withDelta = await swarm(['--protocol', 'drtm', '--seeds', '100', '--workers', '2', '--opt', 'txMarginNs=5000']);
    expect(withDelta.json.failures).toEqual([]);
  }, 300_000);

  it('replays: one seed prints the same mix and digest twice, and worker count does not change the result', async () => {
    const once = await runCli(['check', '--swarm', '--protocol', 'shiftlock', '--seeds', '1', '--first-seed', '17']);
    const twice = await runCli(['check', '--swarm', '--protocol', 'shiftlock', '--seeds', '1', '--first-seed', '17']);
    expect(once.code).toBe(0);
    const mixLine = once.stdout.split('\n')[0]!;
    expect(mixLine).toMatch(/^shiftlock seed 17: clients=\d+ locks=\d+ .* crash=[\d.]+ pauses=.* kill=.* switch=/);
    const digest = (out: string) => /digest ([0-9a-f]{16})/.exec(out)?.[1];
    expect(twice.stdout.split('\n')[0]).toBe(mixLine);
    expect(digest(twice.stdout)).toBe(digest(once.stdout));
    const one = await swarm(['--protocol', 'dslr', '--seeds', '24', '--workers', '1']);
    const two = await swarm(['--protocol', 'dslr', '--seeds', '24', '--workers', '2']);
    expect(two.json.protocols[0]!.digest).toBe(one.json.protocols[0]!.digest);
  }, 300_000);

  it('takes a comma-separated list: each protocol as when run alone', async () => {
    const list = await swarm(['--protocol', 'shiftlock,dslr', '--seeds', '4']);
    expect(list.code).toBe(0);
    expect(list.json.protocols.map((p) => p.protocol)).toEqual(['shiftlock', 'dslr']);
    for (const p of list.json.protocols) {
      const alone = await swarm(['--protocol', p.protocol, '--seeds', '4']);
      expect(p.digest).toBe(alone.json.protocols[0]!.digest);
    }
  }, 120_000);

  it('refuses bad flags with exit 2, listing every problem', async () => {
    const { code, stderr } = await runCli(['check', '--swarm', '--protocol', 'nope', '--workers', '0', '--clients', '4']);
    expect(code).toBe(2);
    expect(stderr).toContain('--workers');
    expect(stderr).toContain('--clients: not used with --swarm');
    expect(stderr).toContain('unknown protocol "nope"');
    const listed = await runCli(['check', '--swarm', '--protocol', 'caslock,nope', '--opt', 'backoff=true']);
    expect(listed.code).toBe(2);
    expect(listed.stderr).toContain('unknown protocol "nope"');
    const plain = await runCli(['check', '--protocol', 'caslock,dslr', '--seeds', '1']);
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain('check runs one protocol at a time');
  });
});
