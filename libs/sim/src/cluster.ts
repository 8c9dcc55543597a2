import { FixedDescriptorDirectory, Nic, NicCounters, NicScheduler, NodeMemory, QueuePairVerbs, createLocalMemory, registerDescriptorRegion } from '@lockfabric/fabric';
import type { NicLoad, NicTimingModel } from '@lockfabric/fabric';
import { FaultInjector, NO_FAULTS, Switch } from '@lockfabric/switch';
import type { FaultSpec, SwitchProgram } from '@lockfabric/switch';
import { noopTrace } from '@lockfabric/ports';
import type { ClientAddress, ClientPorts, Completion, LockPacket, LockTableLayout, NodeId, SwitchPort, TableBinding, Trace, WorkRequest } from '@lockfabric/ports';
import { LockManagerCores } from './lock-manager-cpu.js';
import type { LockManagerCpuConfig, LockManagerCpuStats } from './lock-manager-cpu.js';
import { InMemoryMailboxHub } from './mailbox-hub.js';
import type { SeededRandom } from './random.js';
import type { Scheduler } from './scheduler.js';
import { SchedulerClock } from './scheduler-clock.js';
import { RackTopology } from './racks.js';
import type { RackConfig } from './racks.js';

export interface InMemoryClusterConfig {
  readonly scheduler: Scheduler;
  /** The run's one generator: network jitter, local-RMW gaps and every client's stream derive from it. */
  readonly random: SeededRandom;
  readonly memoryNodes: number;
  readonly computeNodes: number;
  readonly lockCount: number;
  readonly entryBytes: number;
  /** One-way fabric latency of a verb (virtual time only). */
  readonly verbLatencyNs: number;
  /** Extra one-way delay per doorbell drawn from [0, jitterNs): perturbs the schedule. */
  readonly jitterNs: number;
  readonly messageLatencyNs: number;
  /** Largest virtual gap between the load and the store of a local CPU read-modify-write. */
  readonly localRmwGapNs: number;
  readonly mailboxQueueBound: number;
  readonly nicTiming?: Partial<NicTimingModel>;
  readonly trace?: Trace;
  /** The switch every machine is wired to, running this program; no switch ports without one. */
  readonly switchProgram?: SwitchProgram;
  /** Packet faults (loss, duplication, reordering, delay): at the switch's egress, and on the machine→switch link for rules with direction ingress or both. */
  readonly switchFaults?: FaultSpec;
  /** One-way link latency between a machine and the switch. */
  readonly switchLinkNs?: number;
  /** Time a packet spends in the switch pipeline (virtual time); default the switch's own timing. */
  readonly switchPipelineNs?: number;
  /**
   * How the machine–switch links order packets. `fifo`: each link (machine→switch, switch→machine)
   * delivers in send order, as one Ethernet link does; jitter only stretches gaps, and reordering
   * comes from injected faults alone. `jittered` (default): every packet draws its own delay, so
   * two packets sent close together on one link can swap.
   */
  readonly switchLinks?: 'fifo' | 'jittered';
  /**
   * Opt-in CPU cost of lock-manager services (virtual time only): packets reaching a service's
   * switch port (see `servicePorts`) queue for the machine's lock-manager cores. Off by default:
   * services then handle every packet the instant it arrives.
   */
  readonly lockManagerCpu?: LockManagerCpuConfig;
  /**
   * Wraps each machine's switch link once (every client and the node service of the machine then
   * share the wrapper), as a compute node process does: FissLock recovery's gate.
   */
  readonly switchPortWrapper?: (machine: NodeId, link: SwitchPort) => SwitchPort;
  /**
   * Memory nodes may restart in this run (`crashMemoryNode` / `restartMemoryNode`): every client
   * then gets a `tables` binding (ClientPorts.tables) that pins its verbs to the incarnations it
   * follows, as a live compute node's queue pairs do.
   */
  readonly memoryRestarts?: boolean | 'mutant-unfenced';
  /**
   * Count NIC verbs per lock (`NicCountersSnapshot.byLock`). Off by default: over 10 M locks the
   * per-lock map outgrows the lock words (the memory budget) and no run report reads it.
   */
  readonly perLockVerbCounts?: boolean;
  /** Several racks, each with a switch running `switchProgram`, the lock ids partitioned over them (FissLock §5.4). */
  readonly racks?: RackConfig;
  /**
   * Queue pairs may be flushed (`flushQueuePairs`, the swarm's lost-completion fault): the cluster
   * then keeps each node's verbs in flight. Off by default, so the verb path is as it was.
   */
  readonly flushableQueuePairs?: boolean;
}

/** A doorbell batch posted and not yet completed (kept only with `flushableQueuePairs`). */
interface InFlightBatch {
  readonly batch: readonly WorkRequest[];
  readonly pins: ReadonlyMap<NodeId, number> | undefined;
  readonly pair: { lastCompletionNs: number };
  readonly resolve: (completions: Completion[]) => void;
}

export const DEFAULT_SIM_NETWORK = {
  verbLatencyNs: 1_000,
  jitterNs: 200,
  messageLatencyNs: 1_500,
  localRmwGapNs: 400,
  mailboxQueueBound: 1_024,
} as const;

interface FabricNode {
  readonly memory: NodeMemory;
  readonly nic: Nic;
  readonly timing: NicScheduler;
}

/**
 * A whole cluster in one process: memory nodes (ids 0…M-1) holding the lock table in region 0,
 * compute nodes (ids M…M+C-1), a NIC per node, and the mailbox between clients. With a
 * VirtualScheduler this is the `sim` substrate; with a RealTimeScheduler, `embedded`.
 */
export class InMemoryCluster {
  readonly layout: LockTableLayout;
  readonly memoryNodeIds: readonly NodeId[];
  readonly computeNodeIds: readonly NodeId[];
  readonly clock: SchedulerClock;
  readonly mailboxes: InMemoryMailboxHub;
  private readonly nodes = new Map<NodeId, FabricNode>();
  /** The emulated switch, when the run has a switch program (rack 0's with several racks). */
  readonly switch: Switch | undefined;
  /** Every rack's switch, in rack order (one unless `racks` says more). */
  readonly switches: readonly Switch[];
  /** Where packets go with several racks; undefined with one switch. */
  readonly topology: RackTopology | undefined;
  readonly switchFaults: FaultInjector | undefined;
  private readonly packetHandlers = new Map<NodeId, Set<(packet: LockPacket) => void>>();
  /** Per queue pair (client address): when its last completion is due; RC completions keep order. */
  private readonly queuePairs = new Map<string, { lastCompletionNs: number }>();
  /** Per memory node: the incarnation it serves (1 at start, one more per restart). */
  private readonly incarnations = new Map<NodeId, number>();
  /** Memory nodes that are down (crashed, not yet restarted): their verbs fail `unreachable`. */
  private readonly downNodes = new Set<NodeId>();
  /** Called once when a memory node comes back (TableBinding.settle waits on them). */
  private upWaiters: (() => void)[] = [];
  /** Per initiating node: its batches in flight, with `flushableQueuePairs` only. */
  private readonly inFlight = new Map<NodeId, Set<InFlightBatch>>();
  /** Nodes whose queue pairs are breaking (`breakQueuePairs`): no completion comes back until the flush. */
  private readonly breaking = new Map<NodeId, number>();

  constructor(readonly config: InMemoryClusterConfig) {
    if (config.memoryNodes < 1) throw new RangeError('an in-memory cluster needs at least one memory node');
    this.clock = new SchedulerClock(config.scheduler);
    this.memoryNodeIds = range(0, config.memoryNodes);
    this.computeNodeIds = range(config.memoryNodes, config.memoryNodes + config.computeNodes);
    const perNode = Math.ceil(config.lockCount / config.memoryNodes);
    const tables = this.memoryNodeIds.map((node) => {
      const region = this.node(node).memory.register(Math.max(8, perNode * config.entryBytes));
      registerDescriptorRegion(this.node(node).memory, true);
      return { node, region: region.region, rkey: region.rkey, baseOffset: 0 };
    });
    this.layout = { memoryNodes: tables, entryBytes: config.entryBytes, lockCount: config.lockCount };
    for (const node of this.memoryNodeIds) this.incarnations.set(node, 1);
    this.topology = config.racks && config.racks.racks > 1 ? new RackTopology(config.racks, this.computeNodeIds) : undefined;
    if (config.switchProgram) {
      const program = config.switchProgram;
      // the other racks run the same program, built afresh: a program keeps its registers
      const programOf = (rack: number): SwitchProgram => {
        if (rack === 0) return program;
        if (!config.racks?.programOf) throw new RangeError(`racks: ${config.racks?.racks} racks need racks.programOf to build each rack's switch program`);
        return config.racks.programOf(rack);
      };
      this.switches = Array.from({ length: this.topology?.racks ?? 1 }, (_, rack) => new Switch(programOf(rack), { onProgramError: 'drop' }));
      this.switch = this.switches[0];
      this.switchFaults = new FaultInjector(config.random, config.switchFaults ?? NO_FAULTS);
    } else {
      this.switches = [];
      this.switch = undefined;
      this.switchFaults = undefined;
    }
    this.mailboxes = new InMemoryMailboxHub(config.scheduler, {
      latencyNs: config.scheduler.kind === 'virtual' ? config.messageLatencyNs : 0,
      jitterNs: config.scheduler.kind === 'virtual' ? config.jitterNs : 0,
      queueBound: config.mailboxQueueBound,
      random: config.random,
    });
  }

  /**
   * Registers one application data region per memory node (region 2, after the lock table and the
   * descriptor slots) holding `images[i]` on memory node i, before any client runs. Returns their
   * addresses in `layout.memoryNodes` order. The image is copied in directly: no verbs are counted.
   */
  registerDataRegions(images: readonly Uint8Array[]): { node: NodeId; region: number; rkey: number }[] {
    if (images.length !== this.memoryNodeIds.length) throw new RangeError(`one data image per memory node: got ${images.length} for ${this.memoryNodeIds.length}`);
    return this.layout.memoryNodes.map(({ node }, i) => {
      const image = images[i]!;
      const memory = this.node(node).memory;
      const info = memory.register(Math.max(8, image.byteLength));
      // In pieces: one work request carries at most 1 MiB.
      for (let at = 0; at < image.byteLength; at += 1 << 20) {
        const data = image.subarray(at, Math.min(image.byteLength, at + (1 << 20)));
        if (data.some((b) => b !== 0)) memory.execute({ op: 'write', addr: { node, region: info.region, rkey: info.rkey, offset: at }, data }, node);
      }
      return { node, region: info.region, rkey: info.rkey };
    });
  }

  /** The fabric node `id`, created on first use (compute nodes register descriptor regions too). */
  node(id: NodeId): FabricNode {
    let node = this.nodes.get(id);
    if (!node) {
      const memory = new NodeMemory(id);
      const counters = new NicCounters(id, { perLock: this.config.perLockVerbCounts ?? false });
      node = { memory, nic: new Nic(memory, { counters }), timing: new NicScheduler(this.config.nicTiming) };
      this.nodes.set(id, node);
      // Memory nodes register the lock table first and their descriptor region after it.
      if (!this.isMemoryNode(id)) registerDescriptorRegion(memory, false);
    }
    return node;
  }

  /**
   * The ports of one client; `address.node` may be a memory node (a co-located client). With
   * `memoryRestarts`, its verbs are pinned to the incarnations it follows (`tables`), unless
   * `unpinned` (node services, which hold no grants and always reach the current tables).
   */
  clientPorts(address: ClientAddress, unpinned = false): ClientPorts {
    const { scheduler } = this.config;
    const random = this.config.random.fork();
    const home = this.node(address.node);
    const yieldPoint =
      scheduler.kind === 'virtual'
        ? () => this.clock.sleep(1 + Math.floor(this.config.random.next() * this.config.localRmwGapNs))
        : () => new Promise<void>((resolve) => setImmediate(resolve));
    // Looked up once per client, not per verb: ports made twice for one address share the pair.
    const key = `${address.node}/${address.client}`;
    let queuePair = this.queuePairs.get(key);
    if (!queuePair) this.queuePairs.set(key, (queuePair = { lastCompletionNs: 0 }));
    const pair = queuePair;
    const binding = this.config.memoryRestarts === true && !unpinned ? this.tableBinding() : undefined;
    const verbs = new QueuePairVerbs({
      localNode: address.node,
      post: (batch) => this.post(address, pair, batch, binding?.pins()),
      local: createLocalMemory(home.memory, yieldPoint),
    });
    return {
      ...(binding ? { tables: binding.tables } : {}),
      self: address,
      verbs,
      mailbox: this.mailboxes.mailbox(address),
      ...(this.switch ? { switchPort: this.switchPort(address.node) } : {}),
      clock: this.clock,
      random,
      trace: this.config.trace ?? noopTrace,
      locks: this.layout,
      descriptors: new FixedDescriptorDirectory(address, (node) => this.isMemoryNode(node)),
    };
  }

  /**
   * The ports of a machine's lock-manager service (agent pool, lock server). Identical to
   * `clientPorts` unless `lockManagerCpu` is configured on a virtual scheduler: then the switch
   * port hands the service its packets only after they were served by the machine's cores.
   */
  servicePorts(address: ClientAddress): ClientPorts {
    const ports = this.clientPorts(address, true);
    const cpu = this.config.lockManagerCpu;
    if (!cpu || !this.switch || this.config.scheduler.kind !== 'virtual') return ports;
    return { ...ports, switchPort: this.serviceSwitchPort(address.node, cpu) };
  }

  /** Per machine with a charged service port: lock-manager queue counters. */
  lockManagerCpuStats(): Record<string, LockManagerCpuStats> {
    const out: Record<string, LockManagerCpuStats> = {};
    for (const [machine, cores] of this.lmCores) out[String(machine)] = cores.counters;
    return out;
  }

  private readonly lmCores = new Map<NodeId, LockManagerCores>();
  private readonly serviceHandlers = new Map<NodeId, Set<(packet: LockPacket) => void>>();

  /**
   * One registration on the machine's link feeds every service handler of the machine, so a packet
   * costs one service time however many handlers (agent pool, fallback manager) look at it.
   */
  private serviceSwitchPort(machine: NodeId, cpu: LockManagerCpuConfig): SwitchPort {
    const link = this.switchPort(machine);
    let handlers = this.serviceHandlers.get(machine);
    if (!handlers) {
      const set = new Set<(packet: LockPacket) => void>();
      handlers = set;
      this.serviceHandlers.set(machine, set);
      const cores = new LockManagerCores(this.config.scheduler, cpu.coresFor(machine), cpu.packetNs, cpu.queueBound);
      this.lmCores.set(machine, cores);
      // Handlers are looked up when the service time ends: a service stopped meanwhile gets nothing.
      const deliver = (packet: LockPacket) => {
        for (const handler of set) handler(packet);
      };
      link.onPacket((packet) => {
        if (cpu.isWork && !cpu.isWork(packet, machine)) deliver(packet);
        else cores.submit(() => deliver(packet));
      });
    }
    const set = handlers;
    return {
      machine,
      send: (packet) => link.send(packet),
      onPacket: (handler) => {
        const registration = (packet: LockPacket) => handler(packet);
        set.add(registration);
        return () => set.delete(registration);
      },
    };
  }

  /** A machine's link into the switch; every client of a machine sees every packet egressed to it. */
  switchPort(machine: NodeId): SwitchPort {
    const wrap = this.config.switchPortWrapper;
    if (!wrap) return this.switchLink(machine);
    let wrapped = this.wrappedLinks.get(machine);
    if (!wrapped) this.wrappedLinks.set(machine, (wrapped = wrap(machine, this.switchLink(machine))));
    return wrapped;
  }

  private readonly wrappedLinks = new Map<NodeId, SwitchPort>();

  private switchLink(machine: NodeId): SwitchPort {
    return {
      machine,
      send: (packet) => this.sendPacket(machine, packet),
      onPacket: (handler) => {
        let handlers = this.packetHandlers.get(machine);
        if (!handlers) this.packetHandlers.set(machine, (handlers = new Set()));
        const registration = (packet: LockPacket) => handler(packet);
        handlers.add(registration);
        return () => handlers.delete(registration);
      },
    };
  }

  private sendPacket(from: NodeId, packet: LockPacket): void {
    const topology = this.topology;
    const rack = topology ? topology.switchFor(packet, from) : 0;
    const sw = this.switches[rack];
    const faults = this.switchFaults;
    if (!sw || !faults) return;
    const { scheduler } = this.config;
    const linkNs = scheduler.kind === 'virtual' ? (this.config.switchLinkNs ?? 1_000) : 0;
    // another rack's switch is further away, both ways (FissLock §5.4)
    const crossNs = (machine: NodeId) => (topology && scheduler.kind === 'virtual' ? topology.crossNs(machine, rack) : 0);
    const pipelineNs = scheduler.kind === 'virtual' ? (this.config.switchPipelineNs ?? sw.timing.pipelineLatencyNs) : 0;
    // Ingress faults act on the machine→switch link: a lost packet never reaches the pipeline, a
    // duplicate is ingested twice. As on egress, an injected delay is added after the link's order
    // is kept, so faults still reorder.
    for (const copy of faults.applyIngress(packet, from)) {
      scheduler.at(this.linkArrival(this.uplinkLastNs, from, scheduler.nowNs() + linkNs + crossNs(from) + this.jitter()) + copy.delayNs, () => {
        for (const delivery of faults.apply(sw.ingest(copy.packet, from), from)) {
          const target = delivery.action.machine;
          const arrivalNs = this.linkArrival(this.downlinkLastNs, target, scheduler.nowNs() + pipelineNs + linkNs + crossNs(target) + this.jitter());
          scheduler.at(arrivalNs + delivery.delayNs, () => {
            for (const handler of this.packetHandlers.get(target) ?? []) handler(delivery.action.packet);
          });
        }
      });
    }
  }

  /**
   * A packet the switch's control plane sends (the grants of a NetLock purge) down the link to
   * `target`, in link order. As on live (switch-dataplane's purge), it skips the fault injector.
   */
  emitFromSwitch(target: NodeId, packet: LockPacket): void {
    if (!this.switch) return;
    const { scheduler } = this.config;
    const linkNs = scheduler.kind === 'virtual' ? (this.config.switchLinkNs ?? 1_000) : 0;
    const arrivalNs = this.linkArrival(this.downlinkLastNs, target, scheduler.nowNs() + linkNs + this.jitter());
    scheduler.at(arrivalNs, () => {
      for (const handler of this.packetHandlers.get(target) ?? []) handler(packet);
    });
  }

  /** On a FIFO link a packet arrives no earlier than the one sent before it (ties keep send order). */
  private linkArrival(lastNs: Map<NodeId, number>, machine: NodeId, arrivalNs: number): number {
    if (this.config.switchLinks !== 'fifo') return arrivalNs;
    const at = Math.max(arrivalNs, lastNs.get(machine) ?? 0);
    lastNs.set(machine, at);
    return at;
  }

  private readonly uplinkLastNs = new Map<NodeId, number>();
  private readonly downlinkLastNs = new Map<NodeId, number>();

  private jitter(): number {
    return this.config.scheduler.kind === 'virtual' && this.config.jitterNs > 0 ? Math.floor(this.config.random.next() * this.config.jitterNs) : 0;
  }

  /** The incarnation memory node `node` serves now. */
  incarnationOf(node: NodeId): number {
    return this.incarnations.get(node) ?? 0;
  }

  /**
   * Memory node `node` dies like a SIGKILL: from now on every verb that reaches it fails
   * `unreachable`, until `restartMemoryNode`. Needs `memoryRestarts`.
   */
  crashMemoryNode(node: NodeId): void {
    if (!this.config.memoryRestarts) throw new RangeError('crashMemoryNode: the cluster was built without memoryRestarts');
    if (!this.isMemoryNode(node)) throw new RangeError(`crashMemoryNode: ${node} is not a memory node`);
    this.downNodes.add(node);
  }

  /**
   * The memory node comes back empty under a new incarnation: every region it registered (lock
   * table, descriptor slots, data) is zeroed — a fresh process registers fresh memory — and verbs
   * pinned to the old incarnation are refused from now on.
   */
  restartMemoryNode(node: NodeId): void {
    if (!this.downNodes.has(node)) throw new RangeError(`restartMemoryNode: memory node ${node} is not down`);
    const memory = this.node(node).memory;
    for (const region of memory.regions()) memory.reset(region.region);
    this.incarnations.set(node, this.incarnationOf(node) + 1);
    this.downNodes.delete(node);
    const waiters = this.upWaiters;
    this.upWaiters = [];
    for (const wake of waiters) wake();
  }

  /** One client's TableBinding: it pins the incarnations it follows; its verbs carry them. */
  private tableBinding(): { tables: TableBinding; pins: () => ReadonlyMap<NodeId, number> } {
    const current = () => new Map(this.memoryNodeIds.map((node) => [node, this.incarnationOf(node)] as const));
    let pinned: ReadonlyMap<NodeId, number> = current();
    const lost = () => [...pinned].some(([node, incarnation]) => this.incarnationOf(node) !== incarnation);
    const up = () => [...pinned.keys()].every((node) => !this.downNodes.has(node));
    const tables: TableBinding = {
      follow: () => void (pinned = current()),
      lost,
      incarnations: () => pinned,
      settle: async (maxWaitMs) => {
        if (!up()) {
          const woken = new Promise<void>((resolve) => this.upWaiters.push(resolve));
          // Bounded: the wait ends at the deadline even if the node never comes back.
          await Promise.race([woken, this.clock.sleep(maxWaitMs * 1_000_000)]);
        }
        return lost();
      },
    };
    return { tables, pins: () => pinned };
  }

  isMemoryNode(id: NodeId): boolean {
    return id >= 0 && id < this.config.memoryNodes;
  }

  /** NIC counters of every node that served verbs. */
  nicCounters(): Record<string, ReturnType<Nic['counters']['snapshot']>> {
    const out: Record<string, ReturnType<Nic['counters']['snapshot']>> = {};
    for (const [id, node] of this.nodes) out[String(id)] = node.nic.counters.snapshot();
    return out;
  }

  /** Inbound-ceiling load of every node's NIC that served verbs (see NicScheduler.load). */
  nicLoads(): Record<string, NicLoad> {
    const out: Record<string, NicLoad> = {};
    for (const [id, node] of this.nodes) if (node.timing.load.admitted > 0) out[String(id)] = node.timing.load;
    return out;
  }

  private post(initiator: ClientAddress, queuePair: { lastCompletionNs: number }, batch: readonly WorkRequest[], pins?: ReadonlyMap<NodeId, number>): Promise<Completion[]> {
    const { scheduler } = this.config;
    let completeAtNs = scheduler.nowNs();
    if (scheduler.kind === 'virtual') {
      const jitter = this.config.jitterNs > 0 ? Math.floor(this.config.random.next() * this.config.jitterNs) : 0;
      const arrivalNs = scheduler.nowNs() + this.config.verbLatencyNs + jitter;
      let doneNs = arrivalNs;
      for (const wr of batch) {
        const target = this.nodes.get(wr.addr.node);
        if (target) doneNs = Math.max(doneNs, target.timing.admit(wr, arrivalNs).doneNs);
      }
      // Completions of one queue pair never overtake each other (RC ordering).
      completeAtNs = Math.max(doneNs + this.config.verbLatencyNs, queuePair.lastCompletionNs);
      queuePair.lastCompletionNs = completeAtNs;
    }
    if (this.config.flushableQueuePairs) return this.postFlushable(initiator.node, queuePair, batch, pins, completeAtNs);
    return new Promise((resolve) => {
      scheduler.at(completeAtNs, () => resolve(this.refusal(batch, pins) ?? this.execute(initiator.node, batch)));
    });
  }

  /** As `post`'s tail, but the batch stays findable by `flushQueuePairs` until it completes. */
  private postFlushable(node: NodeId, pair: { lastCompletionNs: number }, batch: readonly WorkRequest[], pins: ReadonlyMap<NodeId, number> | undefined, completeAtNs: number): Promise<Completion[]> {
    let set = this.inFlight.get(node);
    if (!set) this.inFlight.set(node, (set = new Set()));
    const inFlight = set;
    return new Promise((resolve) => {
      const entry: InFlightBatch = { batch, pins, pair, resolve };
      inFlight.add(entry);
      this.config.scheduler.at(completeAtNs, () => {
        // A flushed batch was answered already; on a breaking connection the flush answers it.
        if (this.breaking.has(node) || !inFlight.has(entry)) return;
        inFlight.delete(entry);
        resolve(this.refusal(batch, pins) ?? this.execute(node, batch));
      });
    });
  }

  /**
   * Every queue pair of `node` breaks now, as a live queue pair does when its stream to the memory
   * node breaks (partition, pause past keep-alive, proxy cut): each batch in flight completes
   * `unreachable` at once, whether or not the memory node ran it. `applied` is asked once per verb,
   * in order, and says whether that verb reached the memory node before the break; a verb after
   * one that did not never ran either (a reliable connection runs its requests in order). The
   * applied ones run now. Returns the verbs flushed and how many of them ran.
   */
  flushQueuePairs(node: NodeId, applied: () => boolean): { flushed: number; ran: number } {
    if (!this.config.flushableQueuePairs) throw new RangeError('flushQueuePairs: the cluster was built without flushableQueuePairs');
    const set = this.inFlight.get(node);
    const entries = set ? [...set] : [];
    set?.clear();
    const nowNs = this.config.scheduler.nowNs();
    let flushed = 0;
    let ran = 0;
    for (const { batch, pins, pair, resolve } of entries) {
      let prefix = 0;
      while (prefix < batch.length && applied()) prefix++;
      if (prefix > 0 && !this.refusal(batch, pins)) {
        this.execute(node, batch.slice(0, prefix));
        ran += prefix;
      }
      flushed += batch.length;
      // The next post goes over a new connection: it does not queue behind the flushed ones.
      pair.lastCompletionNs = Math.min(pair.lastCompletionNs, nowNs);
      resolve(batch.map(() => ({ status: 'unreachable' as const, detail: `queue pair of node ${node} flushed: its connection broke with the request in flight` })));
    }
    return { flushed, ran };
  }

  /**
   * The connection of `node`'s queue pairs goes silent for `durationNs` before the break is seen
   * (a keep-alive timing out): what is in flight now or posted meanwhile gets no completion, and
   * then all of it is flushed (`flushQueuePairs`). `done` receives the flush's counts.
   */
  breakQueuePairs(node: NodeId, durationNs: number, applied: () => boolean, done: (outcome: { flushed: number; ran: number }) => void = () => {}): void {
    if (!this.config.flushableQueuePairs) throw new RangeError('breakQueuePairs: the cluster was built without flushableQueuePairs');
    // Counted: two overlapping breaks of one node keep it silent until the later one ends.
    this.breaking.set(node, (this.breaking.get(node) ?? 0) + 1);
    this.config.scheduler.at(this.config.scheduler.nowNs() + durationNs, () => {
      const left = (this.breaking.get(node) ?? 1) - 1;
      if (left > 0) this.breaking.set(node, left);
      else this.breaking.delete(node);
      done(this.flushQueuePairs(node, applied));
    });
  }

  /**
   * Judged when the batch lands: a batch that touches a memory node that is down, or one that
   * restarted since the client pinned it, is refused whole (`unreachable`), never applied in part.
   */
  private refusal(batch: readonly WorkRequest[], pins: ReadonlyMap<NodeId, number> | undefined): Completion[] | undefined {
    if (this.downNodes.size === 0 && !pins) return undefined;
    for (const wr of batch) {
      const node = wr.addr.node;
      if (this.downNodes.has(node)) return batch.map(() => ({ status: 'unreachable' as const, detail: `memory node ${node} is down` }));
      const pinned = pins?.get(node);
      if (pinned !== undefined && pinned !== this.incarnationOf(node)) {
        return batch.map(() => ({ status: 'unreachable' as const, detail: `memory node ${node} restarted: incarnation ${pinned} is gone (now ${this.incarnationOf(node)})` }));
      }
    }
    return undefined;
  }

  /** Applies a doorbell batch at its completion time: each verb atomically, in order. */
  private execute(initiator: NodeId, batch: readonly WorkRequest[]): Completion[] {
    const first = batch[0];
    if (first && (batch.length === 1 || batch.every((wr) => wr.addr.node === first.addr.node))) {
      const target = this.nodes.get(first.addr.node);
      if (target) return target.nic.executeBatch(batch, initiator);
    }
    return batch.map((wr) => {
      const target = this.nodes.get(wr.addr.node);
      return target ? target.nic.execute(wr, initiator) : { status: 'unknown-node' as const, detail: `no node ${wr.addr.node} on this fabric` };
    });
  }
}

function range(from: number, to: number): NodeId[] {
  return Array.from({ length: to - from }, (_, i) => from + i);
}
