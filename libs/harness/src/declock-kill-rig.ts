import { HistoryRecorder, checkHistory, recordedClient } from '@lockfabric/check';
import type { InMemoryRunResult } from './in-memory-run.js';
import { runSwarmSeed } from './swarm/run.js';
import type { SwarmSeedResult } from './swarm/run.js';
import { failureRecoveryReport } from './failure-recovery-check.js';
import { SERVICE_CLIENT } from '@lockfabric/locks-common';
import type { NodeService, ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import { NS_PER_MS, clientKey } from '@lockfabric/ports';
import type { ClientPorts, Grant, LockClient, LockId, LockMode, NodeId, Verbs, WorkRequest } from '@lockfabric/ports';
import { createSimCluster } from '@lockfabric/sim';

/** A verb a client posted, as the kill switch sees it once it completed. */
export interface VerbDone {
  readonly node: NodeId;
  readonly op: WorkRequest['op'];
  /** The lock the verb was tagged with (protocols tag their verbs for per-lock NIC counters). */
  readonly lock: LockId | undefined;
}

const never = <T>(): Promise<T> => new Promise<T>(() => undefined);

/**
 * A compute node that can be SIGKILLed in `sim`: from the kill on, nothing it sends leaves
 * (verbs, messages) and no completion reaches it, so its code stops where it was. A verb already
 * at the memory node still lands, as on a real fabric. `after` may kill it right after one of its
 * verbs completed (e.g. between a waiter's FAA and its entry WRITE).
 */
class KillSwitch {
  dead = false;
  killedAtNs: number | undefined;
  constructor(
    private readonly after: (verb: VerbDone) => boolean,
    private readonly now: () => number,
  ) {}

  die(): void {
    if (this.dead) return;
    this.dead = true;
    this.killedAtNs = this.now();
  }

  wrap(ports: ClientPorts): ClientPorts {
    const { verbs, mailbox } = ports;
    const node = ports.self.node;
    const gate = <T>(op: WorkRequest['op'], lock: LockId | undefined, run: () => Promise<T>): Promise<T> => {
      if (this.dead) return never();
      return run().then((value) => {
        if (!this.dead && this.after({ node, op, lock })) this.die();
        return this.dead ? never<T>() : value;
      });
    };
    const killable: Verbs = {
      post: (batch, options) => gate(batch[0]?.op ?? 'read', batch[0]?.lock, () => verbs.post(batch, options)),
      read: (addr, length, options) => gate('read', options?.lock, () => verbs.read(addr, length, options)),
      write: (addr, data, options) => gate('write', options?.lock, () => verbs.write(addr, data, options)),
      cas: (addr, compare, swap, options) => gate('cas', options?.lock, () => verbs.cas(addr, compare, swap, options)),
      faa: (addr, add, options) => gate('faa', options?.lock, () => verbs.faa(addr, add, options)),
      maskedCas: (addr, width, compare, swap, compareMask, swapMask, options) =>
        gate('masked-cas', options?.lock, () => verbs.maskedCas(addr, width, compare, swap, compareMask, swapMask, options)),
      maskedFaa: (addr, width, add, boundaryMask, options) => gate('masked-faa', options?.lock, () => verbs.maskedFaa(addr, width, add, boundaryMask, options)),
      isLocal: (addr) => verbs.isLocal(addr),
      cpu: verbs.cpu,
    };
    return {
      ...ports,
      verbs: killable,
      mailbox: {
        self: mailbox.self,
        send: (message) => {
          if (!this.dead) mailbox.send(message);
        },
        receive: (match, options) => mailbox.receive(match, options).then((message) => (this.dead ? never() : message)),
      },
    };
  }
}

export interface KillRigOptions {
  /** Start each compute node's node service, fed the failure notices (false: clients only, as before the service existed). */
  readonly services?: boolean;
  readonly computeNodes?: number;
  readonly locks?: number;
  readonly seed?: number;
  readonly jitterNs?: number;
  /** Kills the victim right after one of its verbs completed when this returns true. */
  readonly killAfter?: (verb: VerbDone) => boolean;
}

/**
 * A `sim` cluster whose last compute node is the victim, with recorded clients, the protocol's
 * node services and a coordinator stand-in that declares the victim dead (`declareDead`).
 */
export function killRig(protocol: ProtocolDefinition, options: ProtocolOptions, rig: KillRigOptions = {}) {
  const { cluster, scheduler } = createSimCluster({
    seed: rig.seed ?? 1,
    lockCount: rig.locks ?? 4,
    entryBytes: protocol.entryBytes,
    jitterNs: rig.jitterNs ?? 0,
    computeNodes: rig.computeNodes ?? 2,
  });
  const computeNodes = cluster.computeNodeIds;
  const victimNode = computeNodes[computeNodes.length - 1] as NodeId;
  const survivorNodes = computeNodes.filter((node) => node !== victimNode);
  const kill = new KillSwitch(rig.killAfter ?? (() => false), () => cluster.clock.nowNs());
  const listeners = new Set<(node: NodeId) => void>();
  const failures = { onComputeNodeFailed: (listener: (node: NodeId) => void) => (listeners.add(listener), () => listeners.delete(listener)) };
  const now = () => cluster.clock.nowNs();
  const portsOf = (node: NodeId, client: number): ClientPorts => {
    const ports = cluster.clientPorts({ node, client });
    return node === victimNode ? kill.wrap(ports) : ports;
  };
  const services: NodeService[] = [];
  if (rig.services !== false) {
    for (const node of computeNodes) {
      const service = protocol.services?.compute?.({ ports: portsOf(node, SERVICE_CLIENT), memoryNodes: cluster.memoryNodeIds, computeNodes, failures }, options);
      if (service) services.push(service);
    }
  }
  const history = new HistoryRecorder();
  const client = (node: NodeId, index: number, timeoutMs = 1_000) => {
    const ports = portsOf(node, index);
    const lock = protocol.createClient(ports, options) as LockClient;
    const key = clientKey(ports.self);
    const recorded = recordedClient(lock, key, history, now);
    return {
      ports,
      key,
      acquire: (id: LockId, mode: LockMode = 'exclusive'): Promise<Grant> => recorded.acquire(id, mode, timeoutMs),
      release: (grant: Grant): Promise<void> => recorded.release(grant),
    };
  };
  const at = (ns: number) => cluster.clock.sleep(Math.max(0, ns - now()));
  return {
    cluster,
    scheduler,
    history,
    portsOf,
    victimNode,
    survivorNodes,
    now,
    at,
    client,
    /** SIGKILL of the victim now (if `killAfter` has not done it already). */
    kill(): void {
      kill.die();
    },
    get killedAtNs(): number | undefined {
      return kill.killedAtNs;
    },
    get victimDead(): boolean {
      return kill.dead;
    },
    /** The coordinator's FailureNotice for the victim, heard by every surviving node service. */
    declareDead(): void {
      for (const listener of [...listeners]) listener(victimNode);
    },
    /** Runs `script` on the scheduler until it ends or `horizonMs` of virtual time passed. */
    async play(script: () => Promise<void>, horizonMs = 200): Promise<{ done: boolean; endNs: number }> {
      let done = false;
      let failure: unknown;
      const running = script().then(
        () => void (done = true),
        (error: unknown) => {
          failure = error;
          done = true;
        },
      );
      const outcome = await scheduler.run({ stop: () => done, untilNs: now() + horizonMs * NS_PER_MS });
      for (const service of services) await service.stop();
      if (done) await running;
      if (failure) throw failure;
      return { done, endNs: outcome.endNs };
    },
    /** The checker's verdict: the victim's clients count as failed from the kill on. */
    verdict(victimClients: readonly string[], failedAtNs: number) {
      return checkHistory(history, { failedClients: new Map(victimClients.map((key) => [key, failedAtNs])) });
    },
  };
}

export interface KillSweepRun {
  /** The swarm's verdict on the seed (safety over the survivors' and the victim's history, liveness after healing). */
  readonly swarm: SwarmSeedResult;
  readonly why: string;
  /** Per lock the dead node held or queued for: ms from the notice to the first survivor grant after it (demand-adjusted). */
  readonly recoveryAfterNoticeMs: ReadonlyMap<number, number>;
  /** Locks a survivor wanted after the notice but never got. */
  readonly neverFreed: readonly number[];
  readonly survivorAcquireErrors: Readonly<Record<string, number>>;
}

/**
 * A swarm seed (one generator, one checker path) with no fault but one kill: a contended workload
 * of 8 ms on three compute nodes, one of which dies at a drawn moment (wherever its clients are:
 * holding, queued, mid-release, mid-reset) and is declared dead `detectionMs` later by the
 * production control plane. Reads the history for how long each lock the dead node held took to
 * come back after the notice.
 */
export async function killSweepRun(protocol: ProtocolDefinition, seed: number, options: ProtocolOptions, sweep: { detectionMs: number }): Promise<KillSweepRun> {
  let judged: Omit<KillSweepRun, 'swarm' | 'why'> | undefined;
  const judge = (run: InMemoryRunResult): undefined => {
    const failure = run.nodeFailure;
    if (!failure) return undefined;
    const events = run.history.events();
    const report = failureRecoveryReport(events, failure.node, failure.failedAtNs);
    const recovery = new Map<number, number>();
    const neverFreed: number[] = [];
    for (const lock of report.heldByDead) {
      const grant = report.firstSurvivorGrantAfterNs.get(lock);
      const demand = report.firstSurvivorDemandAfterNs.get(lock);
      if (grant === undefined) {
        if (demand !== undefined) neverFreed.push(lock);
        continue;
      }
      recovery.set(lock, (failure.failedAtNs + grant - Math.max(failure.reportedAtNs, failure.failedAtNs + (demand ?? 0))) / NS_PER_MS);
    }
    const errors: Record<string, number> = {};
    for (const e of events) if (e.phase === 'fail' && e.error && Number(e.client.split('/')[0]) !== failure.node) errors[e.error] = (errors[e.error] ?? 0) + 1;
    judged = { recoveryAfterNoticeMs: recovery, neverFreed, survivorAcquireErrors: errors };
    return undefined;
  };
  const swarm = await runSwarmSeed({ ...protocol, swarm: {} }, seed, options, { spec: { durationMs: 8, operations: undefined, timeoutMs: 10 }, kill: { detectionMs: sweep.detectionMs }, judge });
  const found = judged ?? { recoveryAfterNoticeMs: new Map(), neverFreed: [], survivorAcquireErrors: {} };
  const why = [
    swarm.description,
    ...(swarm.failure ? [`${swarm.failure.kind}: ${swarm.failure.detail}`] : []),
    `recovery ${JSON.stringify([...found.recoveryAfterNoticeMs])} never ${JSON.stringify(found.neverFreed)} errors ${JSON.stringify(found.survivorAcquireErrors)}`,
  ].join('\n');
  return { swarm, why, ...found };
}
