// One sim run of the switch lock family's microbenchmark (FissLock §7.3), as its tests measure it
// (the user-facing figures are `lockfabric reproduce fisslock`): grant time from the history,
// switch-decided share, and — opt-in — lock-manager CPU.
//
// Grant time is taken from the history, the same way for every system (libs/check grant-time.ts):
// wait = max(0, t_avail − t_issue), t_avail the last release invocation of a conflicting hold by
// another client before the grant; grant = acquire latency − wait. The spec's [Choice] (agents
// timestamp enqueue/dequeue and carry wait_ns in the GRANT) needs a protocol change and exists only
// in FissLock; the history gives every system the same definition at no protocol cost.
//
// Resource fairness (§10.2): SrvLock and NetLock run their lock server on a dedicated node (the
// lowest compute node) with `lmCoresServer` cores and their clients on the other 7; ParLock and
// FissLock run clients on all 8 and give each node `lmCoresNode` lock-manager cores.
import { grantTimes, quantileOf } from '@lockfabric/check';
import { runInMemory } from '@lockfabric/harness';
import { protocolById } from '../../src/index.js';
import { FLAG_INVALID, existingAgentPool } from '@lockfabric/lock-fisslock';
import type { AgentPool } from '@lockfabric/lock-fisslock';
import type { ClientPorts, LockPacket, NodeId, SwitchPort } from '@lockfabric/ports';
import type { LockManagerCpuConfig } from '@lockfabric/sim';
import type { WorkloadSpec } from '@lockfabric/workloads';

export const SWITCH_SYSTEMS = ['fisslock', 'netlock', 'srvlock', 'parlock'] as const;
export type SwitchSystem = (typeof SWITCH_SYSTEMS)[number];
type ProtocolDefinition = ReturnType<typeof protocolById>;

/**
 * Whether a packet a machine received is a GRANT the switch decided itself: NetLock's queue
 * grants carry its switch flag (bit 1); the FissLock decider's grants (① free, ② shared) are the
 * GRANTs without a sending agent. Server lock managers' grants are neither.
 */
export function switchDecidedGrant(protocol: string, packet: LockPacket): boolean {
  if (packet.type !== 'grant') return false;
  if (protocol === 'netlock') return (packet.flags & 0b10) !== 0;
  if (protocol === 'fisslock') return packet.agent === undefined && (packet.flags & FLAG_INVALID) === 0;
  return false;
}

/** Server lock managers (SrvLock, NetLock's server, ParLock): requests addressed to this machine, and failover's reclaim traffic. */
const SERVER_WORK = new Set<LockPacket['type']>(['acquire', 'release', 'probe', 'transfer', 'free']);

/**
 * Which packets reaching a machine its lock-manager core handles. As the FissLock paper's testbed
 * steers them (§7.1: Flow Director/RSS; §4: "grant replies" go to the lock client, "lock requests"
 * to the agent pool): a GRANT is the client's work — for FissLock also a ① or ⑧ GRANT that
 * carries an agent, which the client installs by calling the pool, with the TRANSFER packets that
 * here carry the agent's holders and queue (the paper's agent travels inside that one GRANT) — and
 * so is an ACK (this implementation's reliability for packets the pool sent; the paper's decider
 * answers a FREE with nothing). Everything else (forwarded ACQUIRE/RELEASE, ② copies, refusals,
 * notifications) is agent-pool work. Server lock managers work on requests addressed to them.
 */
export function lockManagerWork(system: SwitchSystem): (packet: LockPacket, machine: NodeId) => boolean {
  if (system === 'fisslock') return (p) => p.type !== 'ack' && p.type !== 'transfer' && !(p.type === 'grant' && (p.flags & FLAG_INVALID) === 0);
  return (p, machine) => p.dst === machine && SERVER_WORK.has(p.type);
}

/** SrvLock and NetLock serve every lock (NetLock: every lock off the switch) from one dedicated node. */
export function hasDedicatedServer(system: SwitchSystem): boolean {
  return system === 'srvlock' || system === 'netlock';
}

/** The protocol with every switch port tapped: each switch-decided GRANT delivered to a machine counts once; FissLock's agent pools are kept for their counters. */
function tapped(protocol: ProtocolDefinition): { protocol: ProtocolDefinition; switchGrants: () => number; pools: AgentPool[] } {
  const pools: AgentPool[] = [];
  const seen = new WeakSet<LockPacket>();
  let grants = 0;
  const tap = (port: SwitchPort): SwitchPort => ({
    machine: port.machine,
    send: (packet) => port.send(packet),
    onPacket: (handler) =>
      port.onPacket((packet) => {
        if (!seen.has(packet)) {
          seen.add(packet);
          if (switchDecidedGrant(protocol.id, packet)) grants++;
        }
        handler(packet);
      }),
  });
  const wrap = (ports: ClientPorts): ClientPorts => (ports.switchPort ? { ...ports, switchPort: tap(ports.switchPort) } : ports);
  const compute = protocol.services?.compute;
  return {
    protocol: {
      ...protocol,
      createClient: (ports, options) => protocol.createClient(wrap(ports), options),
      ...(protocol.services ? { services: { ...protocol.services, ...(compute ? { compute: (context, options) => keepPool(context.ports, compute({ ...context, ports: wrap(context.ports) }, options)) } : {}) } } : {}),
    },
    switchGrants: () => grants,
    pools,
  };
  function keepPool<T>(ports: ClientPorts, service: T): T {
    const pool = ports.switchPort ? existingAgentPool(ports.locks, ports.switchPort.machine) : undefined;
    if (pool) pools.push(pool);
    return service;
  }
}

export interface SwitchSimOptions {
  readonly system: SwitchSystem;
  readonly spec: WorkloadSpec;
  readonly computeNodes: number;
  readonly links: 'fifo' | 'jittered';
  /** Lock-manager service time per packet; 0 turns the CPU model off. */
  readonly lmPacketNs: number;
  /** Cores of SrvLock's/NetLock's dedicated server node. */
  readonly lmCoresServer: number;
  /** Lock-manager cores of every other node (ParLock managers, FissLock agent pools). */
  readonly lmCoresNode: number;
  /** FissLock's retransmission timeout; default {@link fissLockRtoNs}. */
  readonly fissRtoNs?: number;
  /** More FissLock protocol options (tests: mutants), after the benchmark's. */
  readonly fissOptions?: Readonly<Record<string, number | boolean>>;
}

/**
 * Packets a FissLock ACK may wait behind in a lock-manager queue that the benchmark's RTO allows
 * for. An ACK of a forwarded, bounced or refused packet comes from the agent pool that processes
 * it, so it waits in that pool's queue: a hot lock's pool (one core, 1 µs per packet) queues a few
 * hundred packets (490 at most in the read-mostly Zipf run of 40 000 operations, seed 7). The
 * spec's DPDK-class 200 µs RTO (§12.15) is shorter, so in a run without a single lost packet every
 * resend is spurious, and go-back-N resends the whole window into that queue; with more than 127
 * ② copies queued, a resent transfer GRANT slips past the decider's 8-bit incarnation check and
 * the hot lock ends with holders nobody holds (README, "Lock-manager CPU").
 */
export const FISS_RTO_QUEUE_PACKETS = 1_000;

/** FissLock's RTO in a run: 1 000 lock-manager packet times with the CPU model on (1 ms at 1 µs), never below the protocol's 200 µs. */
export function fissLockRtoNs(lmPacketNs: number): number {
  return Math.max(200_000, FISS_RTO_QUEUE_PACKETS * lmPacketNs);
}

export interface Percentiles {
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
}

export interface SwitchSimRow {
  readonly system: string;
  /** Grant time: acquire latency minus wait behind conflicting holders (from the history), µs. */
  readonly grantUs: Percentiles;
  /** Acquire latency, wait included (from the history), µs. */
  readonly acquireUs: Percentiles;
  /** Share of granted acquires that waited behind a conflicting holder at all. */
  readonly waitedShare: number;
  readonly throughputOpsPerSec: number;
  readonly switchGrantShare: number;
  readonly acquires: number;
  readonly failures: number;
  readonly checkerOk: boolean;
  /** Lock-manager CPU (when on): packets served, dropped at the bound, and mean queueing per served packet. */
  readonly lmCpu?: { readonly served: number; readonly dropped: number; readonly meanQueueingUs: number };
  /** Compute nodes (indices) that hosted clients. */
  readonly clientNodes: readonly number[];
  /** FissLock only: resends of its reliable links, and ② copies its agents counted as lost (a timing guess, §13.4), over all machines. */
  readonly fissLock?: { readonly retransmissions: number; readonly writtenOff: number };
  /** FissLock only: shared ACQUIREs the decider forwarded to the agent at its inca bound instead of granting them (②). */
  readonly incaBoundForwards?: number;
  /** FissLock only: resent FREEs / transfer GRANTs the decider let through 128–255 incarnation steps from its own (the 8-bit aliasing window). */
  readonly incaPastWindow?: number;
}

const toUs = (values: Float64Array): Percentiles => ({ p50: quantileOf(values, 0.5) / 1_000, p90: quantileOf(values, 0.9) / 1_000, p99: quantileOf(values, 0.99) / 1_000 });

/** Runs one system on one workload in the sim and measures it. */
export async function runSwitchSim(options: SwitchSimOptions): Promise<SwitchSimRow> {
  const { system, computeNodes } = options;
  if (!Number.isInteger(computeNodes) || computeNodes < 2) throw new RangeError(`computeNodes must be an integer ≥ 2, got ${computeNodes}`);
  const { protocol, switchGrants, pools } = tapped(protocolById(system));
  // The server is the lowest compute node (srvLockServer), index 0: clients go on the others.
  const clientNodes = Array.from({ length: computeNodes }, (_, i) => i).filter((i) => !hasDedicatedServer(system) || i > 0);
  // FissLock's RTO covers the lock-manager queue an ACK waits in (fissLockRtoNs) and backs off up
  // to 8 × RTO: a shorter one resends spuriously into that queue and the run collapses (README).
  const fissOptions: Record<string, number> = { rtoNs: options.fissRtoNs ?? fissLockRtoNs(options.lmPacketNs), rtoMaxBackoff: 8, ...(options.links === 'fifo' ? { pacingNs: 0 } : {}) };
  const protocolOptions: Record<string, number | boolean> = system === 'fisslock' ? { ...fissOptions, ...options.fissOptions } : {};
  const lockManagerCpu: LockManagerCpuConfig | undefined =
    options.lmPacketNs > 0
      ? {
          packetNs: options.lmPacketNs,
          // Compute node ids follow the one memory node: the lowest is the dedicated server.
          coresFor: (machine) => (hasDedicatedServer(system) && machine === 1 ? options.lmCoresServer : options.lmCoresNode),
          isWork: lockManagerWork(system),
        }
      : undefined;
  const result = await runInMemory({
    substrate: 'sim',
    protocol,
    protocolOptions,
    spec: options.spec,
    computeNodes,
    memoryNodes: 1,
    switchLinks: options.links,
    clientComputeNodes: clientNodes,
    ...(lockManagerCpu ? { lockManagerCpu } : {}),
  });
  const s = result.summary;
  const times = grantTimes(result.history);
  let waited = 0;
  for (const w of times.waitNs) if (w > 0) waited++;
  const cpu = result.lockManagerCpu ? Object.values(result.lockManagerCpu) : undefined;
  const served = cpu?.reduce((n, c) => n + c.served, 0) ?? 0;
  return {
    system,
    grantUs: toUs(times.grantNs),
    acquireUs: toUs(times.acquireNs),
    waitedShare: times.count > 0 ? waited / times.count : 0,
    throughputOpsPerSec: s.throughput,
    switchGrantShare: s.acquires > 0 ? Math.min(1, switchGrants() / s.acquires) : 0,
    acquires: s.acquires,
    failures: s.acquireFailures + s.releaseFailures,
    checkerOk: result.verdict.ok,
    ...(cpu
      ? {
          lmCpu: {
            served,
            dropped: cpu.reduce((n, c) => n + c.dropped, 0),
            meanQueueingUs: served > 0 ? cpu.reduce((n, c) => n + c.queueingNs, 0) / served / 1_000 : 0,
          },
        }
      : {}),
    clientNodes,
    ...(system === 'fisslock' ? { fissLock: { retransmissions: pools.reduce((n, p) => n + p.link.retransmissions, 0), writtenOff: pools.reduce((n, p) => n + p.counters.writtenOff, 0) } } : {}),
    ...(system === 'fisslock'
      ? {
          incaBoundForwards: result.switchDecisions?.['inca-bound-queued'] ?? 0,
          incaPastWindow: (result.switchDecisions?.['dup-transfer-past-window'] ?? 0) + (result.switchDecisions?.['dup-free-past-window'] ?? 0),
        }
      : {}),
  };
}
