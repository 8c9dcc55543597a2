import { summarizeVerdict } from '@lockfabric/check';
import type { ProtocolDefinition, ProtocolOptions, SwarmProfile } from '@lockfabric/locks-common';
import type { Trace } from '@lockfabric/ports';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { runInMemory } from '../in-memory-run.js';
import type { InMemoryRunOptions, InMemoryRunResult } from '../in-memory-run.js';
import { SWARM_COMPUTE_NODES, forcedKill, forcedOutage, swarmMix } from './case.js';
import type { SwarmMix } from './case.js';

/**
 * How a swarm seed failed, in the order it is judged: safety over the whole faulty history first,
 * then liveness (nothing left pending; every lock acquirable again after healing), then a run
 * that threw (a protocol or harness error escaping the run).
 */
export type SwarmFailureKind = 'safety' | 'liveness' | 'error';

/** Exit status of each failure kind, as `lockfabric check` documents it. */
export const SWARM_EXIT: Readonly<Record<SwarmFailureKind, number>> = { safety: 1, liveness: 3, error: 4 };

export interface SwarmSeedResult {
  readonly protocol: string;
  readonly seed: number;
  /** The seed's fault mix in one line (printed at start). */
  readonly description: string;
  /** History digest of the run (healing included); empty when the run threw. */
  readonly digest: string;
  /** Virtual events the simulator ran. */
  readonly simEvents: number;
  readonly failure?: { readonly kind: SwarmFailureKind; readonly detail: string; readonly reproduce: string };
}

/** The one-line command that reruns one swarm seed. */
export function swarmReproduction(protocol: string, seed: number, options: ProtocolOptions = {}, force: readonly ForcibleFault[] = []): string {
  const opts = Object.entries(options).map(([k, v]) => `--opt ${k}=${String(v)}`);
  return ['lockfabric check --swarm', `--protocol ${protocol}`, `--first-seed ${seed}`, '--seeds 1', ...opts, ...(force.length > 0 ? [`--force-faults ${force.join(',')}`] : [])].join(' ');
}

/**
 * Faults `check --swarm --force-faults` turns on whatever the protocol's profile says: how a fault
 * is swept over a protocol before its profile claims it. Flag name → SwarmProfile field.
 */
export const FORCIBLE_FAULTS = {
  crashes: 'crashes',
  'node-kill': 'nodeKill',
  partitions: 'partitions',
  'memory-restart': 'memoryRestart',
  'flushed-verbs': 'flushedVerbs',
} as const satisfies Record<string, keyof SwarmProfile>;
export type ForcibleFault = keyof typeof FORCIBLE_FAULTS;

/** `protocol` with the faults of `force` on in its swarm profile. */
export function withForcedFaults(protocol: ProtocolDefinition, force: readonly ForcibleFault[]): ProtocolDefinition {
  if (force.length === 0) return protocol;
  const forced = Object.fromEntries(force.map((f) => [FORCIBLE_FAULTS[f], true]));
  return { ...protocol, swarm: { ...protocol.swarm, ...forced } };
}

/** Runs one seed's mix on `sim`: the faulty workload, then the heal probe. */
export async function runSwarmMix(protocol: ProtocolDefinition, mix: SwarmMix, trace?: Trace, lockWordsAfterMs?: number) {
  return runInMemory({ ...swarmRunOptions(protocol, mix), ...(trace ? { trace } : {}), ...(lockWordsAfterMs !== undefined ? { recordLockWordsAfterMs: lockWordsAfterMs } : {}) });
}

/** The run of one seed's mix (tests add test-only options to it). */
export function swarmRunOptions(protocol: ProtocolDefinition, mix: SwarmMix): InMemoryRunOptions {
  return {
    substrate: 'sim',
    protocol,
    protocolOptions: mix.options,
    spec: mix.spec,
    computeNodes: SWARM_COMPUTE_NODES,
    jitterNs: mix.jitterNs,
    // A machine–switch link is one Ethernet link: in order, unless an injected fault reorders it.
    switchLinks: 'fifo',
    pauses: mix.pauses,
    colocatedClients: mix.colocatedClients,
    clockDrift: mix.clockDrift,
    heal: mix.heal,
    ...(mix.switchFaults ? { switchFaults: mix.switchFaults } : {}),
    ...(mix.crashProbability > 0 ? { crashProbability: mix.crashProbability } : {}),
    ...(mix.nodeFailure ? { nodeFailure: mix.nodeFailure } : {}),
    ...(mix.coordinatorCrash ? { coordinatorCrash: mix.coordinatorCrash } : {}),
    ...(mix.memoryRestart ? { memoryRestart: mix.memoryRestart } : {}),
    ...(mix.partitions.length > 0 ? { partitions: mix.partitions } : {}),
    ...(mix.flushedVerbs ? { flushedVerbs: mix.flushedVerbs } : {}),
    ...(protocol.swarm?.invariants ? { endCheck: (end) => protocol.swarm!.invariants!(end) } : {}),
  };
}

/**
 * What a protocol's own sweep adds to a swarm seed, so that it runs on the same generator and
 * judge as every other seed: workload changes the mix does not draw, and a judge of its own
 * promise (MCS's FIFO order, say). Not reachable from the command line (but `force`): a seed run
 * with extras is reproduced by its test, and its description says so.
 */
export interface SwarmSeedExtras {
  /** Replaces fields of the seed's drawn workload (short acquire timeouts, say). */
  readonly spec?: Partial<WorkloadSpec>;
  /** Receives the run's spans (a sweep counting which repair paths it reached, say). */
  readonly trace?: Trace;
  /** Keep the lock words this long after the workload ended, before healing (`run.lockWords`, for the judge). */
  readonly lockWordsAfterMs?: number;
  /**
   * At least this many clients on the memory node (ALock's sweep wants both cohorts in every
   * seed). A mix with a memory restart keeps its draw: the restart does not model co-located clients.
   */
  readonly minColocatedClients?: number;
  /**
   * Replaces the drawn client-crash rate (0 switches crashes off), whatever the profile claims: a
   * sweep of what crashes cost a protocol without recovery for them (DrTM's crashed writers, say).
   */
  readonly crashProbability?: number;
  /**
   * Every seed kills a compute node (`forcedKill`), replacing any kill the mix drew, whatever the
   * profile claims: a sweep of one protocol's recovery from a node's death (DecLock's resets, say).
   */
  readonly kill?: {
    readonly detectionMs: number;
    /** The coordinator is down when the node dies (`forcedOutage`), replacing any drawn crash: only its restarted instance can declare the death. */
    readonly inOutage?: boolean;
  };
  /**
   * Replaces the drawn switch faults, whatever the profile claims: loss, duplication, reordering
   * and delay each at `rate` on both links (a machine's packets to the switch and back), as
   * FissLock's wide sweeps ask for 2 % and 10 %.
   */
  readonly switchFaultRate?: number;
  /** Judged after exclusion, before liveness: a message is a safety failure. */
  readonly judge?: (run: InMemoryRunResult, mix: SwarmMix) => string | undefined;
  /** Faults on whatever the profile says: the CLI's `--force-faults`, the one extra a reproduction line carries. */
  readonly force?: readonly ForcibleFault[];
  /** Test only: a restarted coordinator ignores the run's compute nodes it has not heard (CoordinatorCrashSpec). */
  readonly mutantIgnoreExpectedMembers?: boolean;
}

/**
 * Runs one swarm seed and judges it. `base` are the caller's protocol options (`--opt`), which win
 * over the ones the profile draws; the reproduction line carries them.
 */
export async function runSwarmSeed(declared: ProtocolDefinition, seed: number, base: ProtocolOptions = {}, extras: SwarmSeedExtras = {}): Promise<SwarmSeedResult> {
  const protocol = withForcedFaults(declared, extras.force ?? []);
  const mix = withExtras(swarmMix(protocol, seed, base), extras);
  const reproduce = swarmReproduction(protocol.id, seed, base, extras.force);
  const head = { protocol: protocol.id, seed, description: mix.description };
  try {
    const result = await runSwarmMix(protocol, mix, extras.trace, extras.lockWordsAfterMs);
    const { verdict } = result;
    const judged = { ...head, digest: result.digest, simEvents: result.simEvents };
    if (verdict.violations.length > 0) return { ...judged, failure: { kind: 'safety', detail: summarizeVerdict(verdict, 2), reproduce } };
    if (result.endProblems && result.endProblems.length > 0) return { ...judged, failure: { kind: 'safety', detail: `${protocol.id} invariants after healing:\n${result.endProblems.slice(0, 5).join('\n')}`, reproduce } };
    const own = extras.judge?.(result, mix);
    if (own !== undefined) return { ...judged, failure: { kind: 'safety', detail: own, reproduce } };
    const problems: string[] = [];
    if (result.cutOff) problems.push('run cut off with acquires pending');
    if (!verdict.ok) problems.push(summarizeVerdict(verdict, 2));
    if (!result.heal) problems.push('the heal probe never ran');
    else if (result.heal.stuck.length > 0) {
      const retries = Object.entries(result.heal.retriesByError).map(([name, n]) => `${name}×${n}`).join(', ');
      problems.push(`after healing, locks ${result.heal.stuck.join(', ')} not acquirable within ${mix.heal.budgetMs} ms${retries ? ` (failed attempts: ${retries})` : ''}`);
    }
    if (problems.length > 0) return { ...judged, failure: { kind: 'liveness', detail: problems.join('\n'), reproduce } };
    return judged;
  } catch (error) {
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    return { ...head, digest: '', simEvents: 0, failure: { kind: 'error', detail, reproduce } };
  }
}

/** The seed's mix with the extras' workload changes, each named in its description. */
function withExtras(drawn: SwarmMix, extras: SwarmSeedExtras): SwarmMix {
  let mix = drawn;
  if (extras.spec) mix = { ...mix, spec: { ...mix.spec, ...extras.spec }, description: `${mix.description} test-spec=${JSON.stringify(extras.spec)}` };
  const atLeast = Math.min(extras.minColocatedClients ?? 0, mix.spec.clients);
  if (atLeast > mix.colocatedClients && !mix.memoryRestart) mix = { ...mix, colocatedClients: atLeast, description: `${mix.description} test-colocated=${atLeast}` };
  if (extras.kill) {
    const nodeFailure = forcedKill(mix.seed, mix.spec, extras.kill.detectionMs);
    mix = { ...mix, nodeFailure, description: `${mix.description} test-kill=compute${nodeFailure.computeNode}@${nodeFailure.atMs.toFixed(2)}ms(detect ${extras.kill.detectionMs}ms)` };
    if (extras.kill.inOutage) {
      const coordinatorCrash = forcedOutage(mix.seed, nodeFailure);
      mix = { ...mix, coordinatorCrash, description: `${mix.description} test-outage=crash@${coordinatorCrash.atMs.toFixed(2)}ms+${coordinatorCrash.downMs.toFixed(2)}ms` };
    }
  }
  if (extras.switchFaultRate !== undefined) {
    const rate = extras.switchFaultRate;
    if (!(rate >= 0 && rate <= 1)) throw new RangeError(`switchFaultRate must be within 0–1, got ${rate}`);
    const rule = { direction: 'both' as const, loss: rate, duplicate: rate, reorder: rate, reorderNsMax: 20_000, delay: rate, delayNsMin: 1_000, delayNsMax: 50_000 };
    const { switchFaults: _drawn, ...rest } = mix;
    mix = { ...rest, ...(rate > 0 ? { switchFaults: { rules: [rule] } } : {}), description: `${mix.description} test-switch=both@${rate}` };
  }
  if (extras.mutantIgnoreExpectedMembers && mix.coordinatorCrash) {
    mix = { ...mix, coordinatorCrash: { ...mix.coordinatorCrash, mutantIgnoreExpectedMembers: true }, description: `${mix.description} test-mutant=ignore-expected-members` };
  }
  if (extras.crashProbability !== undefined) mix = { ...mix, crashProbability: extras.crashProbability, description: `${mix.description} test-crash=${extras.crashProbability}` };
  return mix;
}

/** Exit status of a set of results: a safety failure beats an error beats a liveness failure. */
export function swarmExitCode(results: readonly SwarmSeedResult[]): number {
  const kinds = new Set(results.flatMap((r) => (r.failure ? [r.failure.kind] : [])));
  if (kinds.has('safety')) return SWARM_EXIT.safety;
  if (kinds.has('error')) return SWARM_EXIT.error;
  return kinds.has('liveness') ? SWARM_EXIT.liveness : 0;
}
