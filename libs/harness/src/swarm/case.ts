import type { ProtocolDefinition, ProtocolOptions, SwarmProfile } from '@lockfabric/locks-common';
import { NS_PER_MS } from '@lockfabric/ports';
import { SeededRandom } from '@lockfabric/sim';
import type { FaultDirection, FaultRule, FaultSpec } from '@lockfabric/switch';
import type { ClockDrift, PauseSpec, WorkloadSpec } from '@lockfabric/workloads';
import { DEFAULT_DETECTION_MS } from '../control/run-control.js';
import type { HealSpec } from '../heal-probe.js';
import type { PartitionSpec } from '../partition.js';
import type { FlushedVerbsSpec } from '../flushed-verbs.js';
import type { CoordinatorCrashSpec, MemoryRestartSpec, NodeFailureSpec } from '../node-failure.js';

/** Compute nodes of a swarm run: clients on all of them, so a killed or paused node leaves survivors. */
export const SWARM_COMPUTE_NODES = 3;

/** One seed's whole mix, drawn from that seed alone: workload shape, protocol options and faults. */
export interface SwarmMix {
  readonly protocol: string;
  readonly seed: number;
  readonly spec: WorkloadSpec;
  readonly options: ProtocolOptions;
  readonly crashProbability: number;
  readonly jitterNs: number;
  readonly switchFaults?: FaultSpec;
  readonly pauses: readonly PauseSpec[];
  readonly nodeFailure?: NodeFailureSpec;
  /** The coordinator's process logic crashes and restarts (its state lost), often in the middle of a recovery. */
  readonly coordinatorCrash?: CoordinatorCrashSpec;
  /** Network cuts of one compute node (its process runs on), healed within the run. */
  readonly partitions: readonly PartitionSpec[];
  /** The memory node restarts with an empty table under a new incarnation. */
  readonly memoryRestart?: MemoryRestartSpec;
  /** Lost completions: queue pairs break with verbs in flight, which may or may not have run. */
  readonly flushedVerbs?: FlushedVerbsSpec;
  /** Per node id: how its clock is off (rate for every protocol, offsets within the profile's skew). */
  readonly clockDrift: Readonly<Record<number, ClockDrift>>;
  /** Clients placed on the memory node (they survive a compute-node kill). */
  readonly colocatedClients: number;
  readonly heal: HealSpec;
  /** One line: what this seed runs. */
  readonly description: string;
}

/**
 * Swarm testing (VOPR-style): one seed derives everything. Every draw is made whether or not the
 * protocol's profile uses it, so a seed's workload is the same for every protocol and only the
 * faults a protocol does not claim to survive are switched off. `base` options win over drawn ones.
 */
export function swarmMix(protocol: ProtocolDefinition, seed: number, base: ProtocolOptions = {}): SwarmMix {
  const profile: SwarmProfile = protocol.swarm ?? {};
  const r = new SeededRandom(seed * 6_151 + 29);
  const pick = <T>(items: readonly T[]): T => items[r.int(items.length)]!;
  const spec: WorkloadSpec = {
    clients: 3 + r.int(10),
    locks: 1 + r.int(6),
    readRatio: protocol.modes.includes('shared') ? pick([0, 0.3, 0.5, 0.9]) : 0,
    distribution: r.next() < 0.5 ? 'uniform' : { zipf: 0.99 },
    operations: 60 + r.int(141),
    thinkNs: r.int(2_000),
    criticalSectionNs: 300 + r.int(3_000),
    seed,
    timeoutMs: 20,
  };
  const jitterNs = pick([0, 200, 1_000, 5_000]);
  // Faults are placed within the workload's expected length (a few µs of verbs per operation).
  const expectedNs = expectedRunNs(spec);
  const crashDraw = r.next() < 0.5 ? 0.005 + r.next() * 0.02 : 0;
  const pauseDraws = drawPauses(r, expectedNs);
  const killDraw = drawKill(r, expectedNs);
  const switchRule = drawSwitchRule(r, profile.switchFaults);
  const colocatedDraw = r.int(Math.floor(spec.clients / 2) + 1);
  const crashDrawn = drawCoordinatorCrash(r, expectedNs, killDraw, new SeededRandom(seed * 5_381 + 47));
  const driftDraws = Array.from({ length: SWARM_COMPUTE_NODES }, () => ({ rate: (r.next() * 2 - 1) * 50e-6, offset: r.next() * 2 - 1 }));
  // Protocol options come last so that adding them to a profile leaves the fault draws unchanged.
  const options = { ...(profile.options?.(r) ?? {}), ...base };
  const crashProbability = profile.crashes ? crashDraw : 0;
  const pauses = profile.pauses ? pauseDraws[profile.pauses] : [];
  const nodeFailure = profile.nodeKill ? killDraw : undefined;
  // Every protocol runs beside the coordinator; its crash must never cost safety or, once back, liveness.
  const coordinatorCrash = crashDrawn;
  // Node ids: memory node 0, compute nodes 1…N (createSimCluster with one memory node).
  const clockDrift: Record<number, ClockDrift> = Object.fromEntries(
    driftDraws.map((d, i) => [1 + i, { rate: d.rate, offsetNs: Math.round((d.offset * (profile.clockSkewNs ?? 0)) / 2) }]),
  );
  const switchFaults: FaultSpec | undefined = switchRule ? { rules: [switchRule] } : undefined;
  const colocatedClients = profile.colocatedClients ? colocatedDraw : 0;
  // Drawn from a stream of its own, so the draws above (and every earlier seed's mix) stay as they were.
  const restartDrawn = drawMemoryRestart(new SeededRandom(seed * 7_919 + 31), expectedNs);
  const memoryRestart = profile.memoryRestart && colocatedClients === 0 ? restartDrawn : undefined;
  const partitionsDrawn = drawPartitions(new SeededRandom(seed * 4_093 + 17), expectedNs, killDraw?.detectionMs ?? DEFAULT_DETECTION_MS);
  const partitions = profile.partitions ? partitionsDrawn : [];
  const flushDrawn = drawFlushedVerbs(new SeededRandom(seed * 3_571 + 43), expectedNs);
  const flushedVerbs = profile.flushedVerbs ? flushDrawn : undefined;
  const heal: HealSpec = { budgetMs: profile.healBudgetMs ?? 50 };
  const description = [
    `${protocol.id} seed ${seed}:`,
    `clients=${spec.clients} locks=${spec.locks} read=${spec.readRatio}`,
    `dist=${spec.distribution === 'uniform' ? 'uniform' : 'zipf:0.99'} ops=${spec.operations}`,
    `cs=${spec.criticalSectionNs}ns think=${spec.thinkNs}ns jitter=${jitterNs}ns`,
    `colocated=${colocatedClients} crash=${crashProbability.toFixed(4)}`,
    `pauses=${pauses.length === 0 ? 'none' : pauses.map((p) => `n${p.node}@${(p.atNs / 1e3).toFixed(0)}us+${(p.durationNs / 1e3).toFixed(0)}us`).join(',')}`,
    `kill=${nodeFailure ? `compute${nodeFailure.computeNode}@${nodeFailure.atMs.toFixed(2)}ms(detect ${nodeFailure.detectionMs!.toFixed(2)}ms)` : 'none'}`,
    `clocks=${Object.values(clockDrift).map((d) => `${(d.rate * 1e6).toFixed(0)}ppm${d.offsetNs ? `${d.offsetNs > 0 ? '+' : ''}${(d.offsetNs / 1e3).toFixed(1)}us` : ''}`).join(',')}`,
    `coordinator=${coordinatorCrash ? `crash@${coordinatorCrash.atMs.toFixed(2)}ms+${coordinatorCrash.downMs.toFixed(2)}ms` : 'up'}`,
    `switch=${switchRule ? describeRule(switchRule) : 'none'}`,
    ...(partitions.length > 0 ? [`cuts=${partitions.map((p) => `n${p.node}@${(p.atNs / 1e3).toFixed(0)}us+${(p.durationNs / 1e3).toFixed(0)}us`).join(',')}`] : []),
    ...(memoryRestart ? [`memory=restart@${memoryRestart.atMs.toFixed(2)}ms+${memoryRestart.downMs.toFixed(2)}ms`] : []),
    ...(flushedVerbs ? [`flush=${flushedVerbs.instants.map((f) => `n${f.node}@${(f.atNs / 1e3).toFixed(0)}us+${(f.silentNs / 1e3).toFixed(0)}us`).join(',')}${partitions.length > 0 ? '+cuts' : ''}`] : []),
    ...(Object.keys(options).length > 0 ? [`opts=${Object.entries(options).map(([k, v]) => `${k}=${String(v)}`).join(',')}`] : []),
  ].join(' ');
  return {
    protocol: protocol.id,
    seed,
    spec,
    options,
    crashProbability,
    jitterNs,
    ...(switchFaults ? { switchFaults } : {}),
    pauses,
    ...(nodeFailure ? { nodeFailure } : {}),
    ...(coordinatorCrash ? { coordinatorCrash } : {}),
    ...(memoryRestart ? { memoryRestart } : {}),
    ...(flushedVerbs ? { flushedVerbs } : {}),
    partitions,
    clockDrift,
    colocatedClients,
    heal,
    description,
  };
}

/** How long a workload is expected to run (a few µs of verbs per operation), where faults are placed. */
function expectedRunNs(spec: WorkloadSpec): number {
  if (spec.operations === undefined && spec.durationMs !== undefined) return spec.durationMs * NS_PER_MS;
  return ((spec.operations ?? 0) / spec.clients) * (spec.criticalSectionNs + spec.thinkNs + 5_000);
}

/**
 * A kill every seed gets (`SwarmSeedExtras.kill`), whatever its mix drew: one compute node dies
 * within the seed's final workload, declared dead `detectionMs` later. Drawn from a stream of its
 * own, so the seed's other draws stay as they were.
 */
export function forcedKill(seed: number, spec: WorkloadSpec, detectionMs: number): NodeFailureSpec {
  const r = new SeededRandom(seed * 2_897 + 53);
  const computeNode = r.int(SWARM_COMPUTE_NODES);
  const withinRunMs = (expectedRunNs(spec) * (0.1 + r.next() * 0.8)) / NS_PER_MS;
  // After the node's first heartbeat (see drawKill).
  return { computeNode, atMs: Math.max(withinRunMs, 2 * detectionMs), detectionMs };
}

/**
 * A compute node dies within the workload, after the control plane has heard from it (two
 * detection timeouts in): a death before its first heartbeat is declared only because the
 * coordinator expects the run's nodes, which the crash draws already reach (outageOverKill).
 */
function drawKill(r: SeededRandom, expectedNs: number): NodeFailureSpec | undefined {
  if (r.next() >= 0.4) return undefined;
  const computeNode = r.int(SWARM_COMPUTE_NODES);
  const withinRunMs = (expectedNs * (0.1 + r.next() * 0.8)) / NS_PER_MS;
  const detectionMs = 0.1 + r.next() * 0.9;
  return { computeNode, atMs: Math.max(withinRunMs, 2 * detectionMs), detectionMs };
}

/**
 * A third of seeds crash the coordinator; it is back after 0.2–3 ms. With a drawn kill, half of
 * them crash right after the kill is detected (so the crash cuts a recovery short) and half so
 * that the outage covers the kill (`outageOverKill`: only a restarted coordinator can declare the
 * death); without one, anywhere in the run. `own` is a stream of its own, so that the draws of
 * `r` (and every mix without a kill and a crash) stay as they were.
 */
function drawCoordinatorCrash(r: SeededRandom, expectedNs: number, kill: NodeFailureSpec | undefined, own: SeededRandom): CoordinatorCrashSpec | undefined {
  const on = r.next() < 1 / 3;
  const anywhereMs = (expectedNs * (0.1 + r.next() * 0.8)) / NS_PER_MS;
  const afterDetectionMs = r.next() * 0.5;
  const downMs = 0.2 + r.next() * 2.8;
  const overKill = own.next() < 0.5;
  const lead = own.next();
  if (!on) return undefined;
  if (kill && overKill) return outageOverKill(kill, downMs, lead);
  const atMs = kill ? kill.atMs + (kill.detectionMs ?? 0) + afterDetectionMs : anywhereMs;
  return { atMs, downMs };
}

/**
 * A coordinator crash whose outage covers `kill`: the node dies while no coordinator runs, or up
 * to one detection timeout before the crash (dead, not yet declared); `where` (0–1) places it in
 * that span. The crash may come before the first view: the restarted coordinator then learns of
 * the node from the run's compute nodes it expects, not from a recalled view (libs/control
 * Membership `expected`).
 */
export function outageOverKill(kill: NodeFailureSpec, downMs: number, where: number): CoordinatorCrashSpec {
  const detectionMs = kill.detectionMs ?? DEFAULT_DETECTION_MS;
  const killAfterCrashMs = -detectionMs + where * (downMs + detectionMs);
  return { atMs: Math.max(0, kill.atMs - killAfterCrashMs), downMs };
}

/** A coordinator outage over a forced kill (`SwarmSeedExtras.kill.inOutage`), drawn from a stream of its own. */
export function forcedOutage(seed: number, kill: NodeFailureSpec): CoordinatorCrashSpec {
  const r = new SeededRandom(seed * 1_723 + 61);
  const downMs = 0.2 + r.next() * 2.8;
  return outageOverKill(kill, downMs, r.next());
}

/**
 * Two seeds in five cut one compute node off once or twice, each cut shorter than the failure
 * detector's timeout (a longer one is a death the coordinator fences, which live does and the
 * sim does not model: the node would come back holding locks its recovery gave away).
 */
function drawPartitions(r: SeededRandom, expectedNs: number, detectionMs: number): PartitionSpec[] {
  const on = r.next() < 0.4;
  const node = 1 + r.int(SWARM_COMPUTE_NODES);
  const count = 1 + r.int(2);
  const maxNs = Math.min(1_000_000, 0.8 * detectionMs * NS_PER_MS);
  const cuts: PartitionSpec[] = [];
  for (let i = 0; i < count; i++) {
    const atNs = Math.round(expectedNs * (0.05 + r.next() * 0.9));
    cuts.push({ node, atNs, durationNs: Math.round(20_000 + r.next() * Math.max(0, maxNs - 20_000)) });
  }
  return on ? cuts : [];
}

/**
 * Two seeds in five break one compute node's queue pairs one to three times within the workload,
 * each after 1–31 µs of silence (and at each of its cuts' starts, if the seed has cuts); the coin
 * of each flushed verb is seeded here.
 */
function drawFlushedVerbs(r: SeededRandom, expectedNs: number): FlushedVerbsSpec | undefined {
  const on = r.next() < 0.4;
  const node = 1 + r.int(SWARM_COMPUTE_NODES);
  const count = 1 + r.int(3);
  const instants = Array.from({ length: count }, () => ({ node, atNs: Math.round(expectedNs * (0.05 + r.next() * 0.9)), silentNs: 1_000 + r.int(30_000) }));
  const seed = r.int(2 ** 31);
  return on ? { instants, onCuts: true, seed } : undefined;
}

/** Two seeds in five restart the memory node within the workload; it is back after 0.05–2 ms. */
function drawMemoryRestart(r: SeededRandom, expectedNs: number): MemoryRestartSpec | undefined {
  const on = r.next() < 0.4;
  const atMs = (expectedNs * (0.1 + r.next() * 0.8)) / NS_PER_MS;
  const downMs = 0.05 + r.next() * 1.95;
  return on ? { atMs, downMs } : undefined;
}

/** Both pause flavours are drawn for every seed; the profile picks one. Node ids are memory nodes (1) + index. */
function drawPauses(r: SeededRandom, expectedNs: number): Record<'short' | 'beyond-lease', PauseSpec[]> {
  const on = r.next() < 0.4;
  const node = 1 + r.int(SWARM_COMPUTE_NODES);
  const count = 1 + r.int(3);
  const short: PauseSpec[] = [];
  const long: PauseSpec[] = [];
  for (let i = 0; i < count; i++) {
    const atNs = Math.round(expectedNs * (0.05 + r.next() * 0.9));
    const shortNs = 5_000 + r.int(95_000);
    const longNs = 400_000 + r.int(800_000);
    short.push({ node, atNs, durationNs: shortNs });
    long.push({ node, atNs, durationNs: longNs });
  }
  return on ? { short, 'beyond-lease': long } : { short: [], 'beyond-lease': [] };
}

/** A third of seeds run a clean switch; the rest one rule with each kind on or off, up to 10 % (FissLock's sweep bar). */
function drawSwitchRule(r: SeededRandom, kind: SwarmProfile['switchFaults']): FaultRule | undefined {
  const on = r.next() >= 1 / 3;
  const direction: FaultDirection = (['egress', 'ingress', 'both'] as const)[r.int(3)]!;
  const rate = (): number => (r.next() < 0.5 ? Math.round((0.01 + r.next() * 0.09) * 1000) / 1000 : 0);
  const loss = kind === 'lossy' ? rate() : (rate(), 0);
  const duplicate = kind === 'lossy' ? rate() : (rate(), 0);
  const reorder = rate();
  const delay = rate();
  if (!kind || !on || loss + duplicate + reorder + delay === 0) return undefined;
  // The fault spec refuses bounds for a kind that is off, so each kind brings its own.
  return {
    direction,
    ...(loss > 0 ? { loss } : {}),
    ...(duplicate > 0 ? { duplicate } : {}),
    ...(reorder > 0 ? { reorder, reorderNsMax: 20_000 } : {}),
    ...(delay > 0 ? { delay, delayNsMin: 1_000, delayNsMax: 50_000 } : {}),
  };
}

function describeRule(rule: FaultRule): string {
  return `${rule.direction ?? 'egress'}(loss=${rule.loss ?? 0},dup=${rule.duplicate ?? 0},reorder=${rule.reorder ?? 0},delay=${rule.delay ?? 0})`;
}
