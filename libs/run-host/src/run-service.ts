import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { Server, ServerUnaryCall, ServerWritableStream, sendUnaryData } from '@grpc/grpc-js';
import { HistoryRecorder } from '@lockfabric/check';
import { FixedDescriptorDirectory, QueuePairVerbs, createLocalMemory } from '@lockfabric/fabric';
import type { NodeMemory } from '@lockfabric/fabric';
import { availableProtocols, protocolById } from '@lockfabric/lock-catalog';
import { SERVICE_CLIENT } from '@lockfabric/locks-common';
import type { NodeService, NodeServiceContext, ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import { MalformedInputCounter, grpcError, guardedServer, hostRunOptions, rawMethodOf, unaryHandler } from '@lockfabric/live';
import type { Logger, MailboxHub, MemoryDescription } from '@lockfabric/live';
import { ConfigError, RunAbortedError, errorMessage } from '@lockfabric/ports';
import type { ClientPorts, LockTableLayout, NodeId, SwitchPort, Trace, Verbs } from '@lockfabric/ports';
import { RealClock } from '@lockfabric/realtime';
import { SeededRandom } from '@lockfabric/random';
import {
  ComputeNodeService,
  DescribeComputeNodeResponseSchema,
  PrepareRunResponseSchema,
  RunEventSchema,
  RunProgressSchema,
  RunRequestSchema,
  RunResultSchema,
} from '@lockfabric/wire';
import type { RunEvent, RunRequest, WorkloadSpec as WireWorkloadSpec } from '@lockfabric/wire';
import { AppRunLog, DATA_REGION, RunStats, VerbAccounting, encodeAppLog, phaseTimingToWire, runClients, runSpecFromWire, summarize } from '@lockfabric/workloads';
import type { DataRegions } from '@lockfabric/workloads';
import type { RunSpec } from '@lockfabric/workloads';
import { SmallBankStore } from '@lockfabric/smallbank';
import type { LiveFabric } from './live-fabric.js';
import { RunSlot, RunSlotError } from './run-slot.js';
import { RunSwitchPort } from './run-switch-port.js';
import { withClusterRacks } from './rack-options.js';
import type { Schedule } from './run-slot.js';
import { VerbGate } from './verb-gate.js';
import { HistoryStreamer } from './history-streamer.js';


export interface CurrentRun {
  readonly protocol: string;
  readonly options: ProtocolOptions | undefined;
  readonly locks: LockTableLayout;
}

const runMethod = rawMethodOf(ComputeNodeService.method.run);
const prepareMethod = rawMethodOf(ComputeNodeService.method.prepare);
const describeMethod = rawMethodOf(ComputeNodeService.method.describe);
const PROGRESS_INTERVAL_MS = 250;
const HISTORY_FLUSH_MS = 50;
/** How long a new run waits for the previous run's verbs already on their way (none, normally). */
const OLD_RUN_DRAIN_MS = 2_000;

export interface RunServiceDeps {
  readonly node: NodeId;
  readonly maxClients: number;
  readonly fabric: LiveFabric;
  readonly memory: NodeMemory;
  readonly memoryNodes: readonly MemoryDescription[];
  readonly mailboxes: MailboxHub;
  readonly trace: Trace;
  readonly logger: Logger;
  /** This machine's link into its rack's switch (switch-family protocols). */
  readonly switchPort?: SwitchPort;
  /** Switches the cluster's lock ids are partitioned over (`switch.racks`, FissLock §5.4); default 1. */
  readonly racks?: number;
  /** Compute nodes the coordinator declared dead, for node services (lock servers) to recover their locks. */
  readonly failures?: NodeServiceContext['failures'];
  /** Where undecodable Prepare requests are counted (the node's shared counter); a private one otherwise. */
  readonly malformed?: MalformedInputCounter;
  /** A prepared run with no Run after this long is dropped (default DEFAULT_PREPARED_TIMEOUT_MS). */
  readonly preparedTimeoutMs?: number;
  /** Timer for the prepared-run timeout (tests inject a manual one). */
  readonly schedule?: Schedule;
  /**
   * This host is a memory node: its clients sit beside its lock table (region 0) and reach it with
   * the CPU, as ALock's local cohort does (ALock §3). Only here does the test-only
   * MUTANT_LOCAL_VERBS_OPTION apply.
   */
  readonly hostsTable?: boolean;
}

/** A run prepared on this node (its node service installed, its clients' ports built) and not yet finished. */
interface PreparedRun {
  readonly spec: RunSpec;
  /** Releases this node's clients skip on purpose (bench --skip-release-probability). */
  readonly skipReleaseProbability: number;
  readonly protocol: ProtocolDefinition;
  readonly current: CurrentRun;
  readonly service: NodeService | undefined;
  readonly ports: readonly ClientPorts[];
  /** The clients' switch port, closed when the run ends (the node service keeps the link itself). */
  readonly clientSwitchPort: RunSwitchPort | undefined;
}

/**
 * ComputeNodeService: runs the driver's workloads on this node's lock clients, one run at a time,
 * started in two phases (Prepare, then Run) so that no client of a run sends before every node has
 * replaced the previous run's node service with this run's (README: "start barrier").
 */
export class ComputeRunService {
  private readonly clock = new RealClock();
  /**
   * The last run's node service (lock manager, agent pool). It outlives this node's clients: peers'
   * clients of the same run may still need the locks homed or the agents living here, and the
   * driver ends a run only when every node has finished. It stops when the next run is prepared
   * or the node closes.
   */
  private lingering: NodeService | undefined;
  /** The protocol, options and lock layout of the prepared, running (or lingering) run, for recovery responders. */
  current: CurrentRun | undefined;
  runs = 0;
  /** Rejoin (rejoin-watch.ts): the running run's abort, and the gate that fences its clients' verbs locally. */
  private abortRun: AbortController | undefined;
  private readonly gate: VerbGate;
  /** Retirements so far: a run that ends after its incarnation was retired leaves no lingering service. */
  private retirements = 0;
  private readonly slot: RunSlot<PreparedRun>;
  private readonly malformed: MalformedInputCounter;

  constructor(private readonly deps: RunServiceDeps) {
    this.gate = new VerbGate(deps.node);
    this.malformed = deps.malformed ?? new MalformedInputCounter({ logger: deps.logger });
    this.slot = new RunSlot<PreparedRun>({
      node: deps.node,
      prepare: (request, oneShot) => this.prepareRun(request, oneShot),
      discard: (prepared) => this.discardRun(prepared),
      ...(deps.preparedTimeoutMs !== undefined ? { preparedTimeoutMs: deps.preparedTimeoutMs } : {}),
      ...(deps.schedule ? { schedule: deps.schedule } : {}),
      onDropped: (runId, reason) => deps.logger.warn(`compute node ${deps.node}: prepared run ${runId} ${reason}`),
    });
  }

  /** Where the run slot stands (for tests and health): idle, preparing, prepared or running. */
  get phase(): RunSlot<PreparedRun>['phase'] {
    return this.slot.phase;
  }

  async listen(port: number, host = '0.0.0.0'): Promise<{ server: Server; port: number }> {
    const { server, credentials } = guardedServer();
    server.addService(
      { run: runMethod, prepare: prepareMethod, describe: describeMethod },
      {
        run: (call: ServerWritableStream<Uint8Array, Uint8Array>) => void this.run(call),
        prepare: unaryHandler(ComputeNodeService.method.prepare, { malformed: this.malformed, statusOf }, async (request) => {
          if (!request.run) throw new ConfigError(['PrepareRunRequest has no run']);
          const prepared = await this.slot.prepare(request.run);
          return create(PrepareRunResponseSchema, { runId: prepared.runId, expiresInMs: BigInt(prepared.expiresInMs) });
        }),
        describe: (_call: ServerUnaryCall<Uint8Array, Uint8Array>, callback: sendUnaryData<Uint8Array>) =>
          callback(
            null,
            toBinary(
              DescribeComputeNodeResponseSchema,
              create(DescribeComputeNodeResponseSchema, { node: this.deps.node, clients: this.deps.maxClients, protocols: availableProtocols().map((p) => p.id), ready: true }),
            ),
          ),
      },
    );
    const bound = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`${host}:${port}`, credentials, (error, actual) => (error ? reject(error) : resolve(actual))),
    );
    return { server, port: bound };
  }

  private async run(call: ServerWritableStream<Uint8Array, Uint8Array>): Promise<void> {
    let request: RunRequest;
    try {
      request = fromBinary(RunRequestSchema, call.request);
    } catch (error) {
      this.malformed.record('grpc ComputeNodeService.Run', error, call.getPeer());
      failCall(call, GrpcStatus.INVALID_ARGUMENT, `malformed RunRequest: ${String(error)}`);
      return;
    }
    const abort = new AbortController();
    call.on('cancelled', () => abort.abort(new RunAbortedError('driver cancelled the run')));
    let prepared: PreparedRun;
    try {
      prepared = await this.slot.begin(request);
    } catch (error) {
      failCall(call, statusOf(error), errorMessage(error));
      return;
    }
    this.abortRun = abort;
    const retirements = this.retirements;
    try {
      await this.execute(request, prepared, call, abort.signal);
      call.end();
    } catch (error) {
      const code = error instanceof ConfigError ? GrpcStatus.INVALID_ARGUMENT : GrpcStatus.INTERNAL;
      this.deps.logger.warn(`run ${request.runId} failed: ${errorMessage(error)}`);
      failCall(call, code, errorMessage(error));
    } finally {
      if (this.abortRun === abort) this.abortRun = undefined;
      prepared.clientSwitchPort?.close();
      // The node service outlives the run for peers' clients, unless its incarnation was retired meanwhile.
      if (retirements === this.retirements) this.lingering = prepared.service;
      else await this.discardRun(prepared);
      this.slot.end();
    }
  }

  /**
   * Retires this node's incarnation after the coordinator declared it dead (rejoin-watch.ts): the
   * running run is aborted (acquires that honour the signal end with LockAbortedError), every verb
   * its clients post from now on completes `unreachable` without leaving the node, the verbs already
   * in flight are awaited (at most `drainMs`) so none reaches a memory node after the new
   * incarnation is admitted, and the protocol's node service (lock server, agents) is dropped, as is
   * a run prepared and not started (its ports belong to the retired incarnation).
   */
  async retire(reason: string, drainMs = 5_000): Promise<void> {
    this.gate.retire(reason);
    this.retirements++;
    this.abortRun?.abort(new RunAbortedError(`compute node ${this.deps.node} was declared dead: ${reason}`));
    await this.slot.drop(`compute node ${this.deps.node} was declared dead: ${reason}`);
    if (!(await this.gate.drain(drainMs))) this.deps.logger.warn(`compute node ${this.deps.node}: ${this.gate.inflightBatches} verb batch(es) still in flight after ${drainMs} ms; rejoining anyway`);
    await this.stopLingering();
  }

  /**
   * Phase one (also run implicitly by a one-phase Run): validates the request, stops the previous
   * run's node service, and installs this run's node service and its clients' ports.
   */
  private async prepareRun(request: RunRequest, oneShot: boolean): Promise<PreparedRun> {
    if (!request.spec) throw new ConfigError(['RunRequest has no workload spec']);
    const host = hostRunOptions(request.spec.options);
    const named = runSpecOf({ ...request.spec, options: host.protocol });
    const tableViaVerbs = host.mutantLocalVerbs && this.deps.hostsTable === true;
    const protocol = protocolById(named.protocol);
    const rackOptions = withClusterRacks(protocol, named.options, this.deps.racks ?? 1);
    const spec = rackOptions === named.options ? named : { ...named, options: rackOptions };
    if (this.deps.hostsTable && protocol.services?.compute) {
      throw new ConfigError([`${protocol.id} runs a compute-node service; its clients cannot run on memory node ${this.deps.node}`]);
    }
    if (spec.workload.clients > this.deps.maxClients) {
      throw new ConfigError([`compute node ${this.deps.node} hosts at most ${this.deps.maxClients} clients, the run asks for ${spec.workload.clients}`]);
    }
    for (const [node, address] of Object.entries(request.peers)) this.deps.fabric.setEndpoint(Number(node), address);
    await this.deps.fabric.rebindMemoryNodes();
    const layout = this.layoutFor(protocol.entryBytes, spec.workload.locks);
    const memoryNodeIds = this.deps.memoryNodes.map((d) => d.node);
    const computeNodeIds = Object.keys(request.peers).map(Number).filter((id) => !memoryNodeIds.includes(id));
    if (!computeNodeIds.includes(this.deps.node) && !this.deps.hostsTable) computeNodeIds.push(this.deps.node);
    computeNodeIds.sort((a, b) => a - b);
    // The previous run's clients may still be running (a waiter that gave up watches its queue
    // node for a grant that never comes); this run's clients reuse those queue nodes. Their verbs
    // are refused from here on, and those already on their way land before this run starts.
    if (!host.mutantKeepOldRunVerbs) {
      this.gate.replaceRun(request.runId);
      if (!(await this.gate.drain(OLD_RUN_DRAIN_MS))) this.deps.logger.warn(`compute node ${this.deps.node}: ${this.gate.inflightBatches} verb batch(es) of the previous run still in flight after ${OLD_RUN_DRAIN_MS} ms; preparing run ${request.runId} anyway`);
    }
    // The previous run's node service stops before this run's starts: both would answer the same packets.
    await this.stopLingering();
    // Mail still queued for this node's clients is the previous run's: with the barrier no client
    // of this run has started anywhere yet. Left there, this run's clients of the same index would
    // take it as theirs. A one-phase start cannot tell (a peer's clients may have started), so it
    // keeps the queues as they are.
    const stale = oneShot ? 0 : await this.dropQueuedMail();
    if (stale > 0) this.deps.logger.info(`compute node ${this.deps.node}: dropped ${stale} message(s) the previous run left queued before run ${request.runId}`);
    const current: CurrentRun = { protocol: spec.protocol, options: spec.options, locks: layout };
    this.current = current;
    const clientSwitchPort = this.deps.switchPort ? new RunSwitchPort(this.deps.switchPort) : undefined;
    let service: NodeService | undefined;
    try {
      service = protocol.services?.compute?.(
        { ports: this.clientPorts(SERVICE_CLIENT, layout, spec.workload.seed, this.deps.switchPort), memoryNodes: memoryNodeIds, computeNodes: computeNodeIds, ...(this.deps.failures ? { failures: this.deps.failures } : {}) },
        spec.options,
      );
      const ports = Array.from({ length: spec.workload.clients }, (_, i) => this.clientPorts(i, layout, spec.workload.seed, clientSwitchPort, tableViaVerbs));
      return { spec, protocol, current, service, ports, clientSwitchPort, skipReleaseProbability: host.skipReleaseProbability };
    } catch (error) {
      await this.discardRun({ spec, protocol, current, service, ports: [], clientSwitchPort, skipReleaseProbability: 0 });
      throw error;
    }
  }

  /** Empties the mailbox queues of this node's clients and node service; returns how many messages were dropped. */
  private async dropQueuedMail(): Promise<number> {
    let dropped = 0;
    for (const client of [SERVICE_CLIENT, ...Array.from({ length: this.deps.maxClients }, (_, i) => i)]) {
      if (this.deps.mailboxes.queued(client) === 0) continue;
      const mailbox = this.deps.mailboxes.mailbox(client);
      // A deadline already passed: take what is queued, never wait.
      while (await mailbox.receive(() => true, { deadlineNs: 0 })) dropped++;
    }
    return dropped;
  }

  /** Undoes a prepared run that will not (or no longer) serve: its node service stops. */
  private async discardRun(prepared: PreparedRun): Promise<void> {
    if (this.current === prepared.current) this.current = undefined;
    prepared.clientSwitchPort?.close();
    await prepared.service?.stop();
  }

  private async execute(request: RunRequest, prepared: PreparedRun, call: ServerWritableStream<Uint8Array, Uint8Array>, signal: AbortSignal): Promise<void> {
    const { spec, protocol, ports, skipReleaseProbability } = prepared;
    const recorder = new HistoryRecorder();
    const stats = new RunStats();
    const accounting = new VerbAccounting();
    const send = (event: RunEvent) => call.write(toBinary(RunEventSchema, event));
    const startMs = Date.now();
    const history = new HistoryStreamer(recorder, (bytes) => call.write(bytes), () => call.writableLength);
    // The history goes out every HISTORY_FLUSH_MS: a node killed mid-run loses at most that stretch.
    const flusher = request.recordHistory ? setInterval(() => history.flush(), HISTORY_FLUSH_MS) : undefined;
    const progress = setInterval(() => {
      send(create(RunEventSchema, { event: { case: 'progress', value: create(RunProgressSchema, { opsDone: BigInt(stats.acquires), elapsedMs: BigInt(Date.now() - startMs) }) } }));
    }, PROGRESS_INTERVAL_MS);
    // Application runs (object store, B+tree) keep their data in the memory nodes' data region.
    const appLog = spec.workload.application ? new AppRunLog() : undefined;
    const dataRegions = appLog ? this.dataRegions() : undefined;
    // --cs-verbs: the critical sections' data verbs go to the start of the same data regions.
    const csDataRegions = (spec.workload.csVerbs ?? 0) > 0 ? this.dataRegions() : undefined;
    let result;
    // SmallBank: this node's transactions read and write balances in the run's Redis.
    const smallbank = spec.workload.transactions?.workload.kind === 'smallbank' ? spec.workload.transactions.workload : undefined;
    const store = smallbank ? await SmallBankStore.open(smallbank.redisUrl ?? '') : undefined;
    try {
      result = await runClients({ protocol, protocolOptions: spec.options, spec: spec.workload, ports: [...ports], recorder, stats, clock: this.clock, signal, accounting, ...(appLog && dataRegions ? { appLog, dataRegions } : {}), ...(csDataRegions ? { csDataRegions } : {}), ...(store ? { txnData: store } : {}), ...(skipReleaseProbability > 0 ? { skipReleaseProbability } : {}) });
    } finally {
      clearInterval(progress);
      clearInterval(flusher);
      await store?.close();
    }
    this.runs++;
    if (request.recordHistory) history.flush(Infinity);
    const elapsedNs = result.endNs - result.startNs;
    const summary = summarize(stats, elapsedNs);
    const wireStats = stats.toWire();
    send(
      create(RunEventSchema, {
        event: {
          case: 'result',
          value: create(RunResultSchema, {
            throughput: summary.throughput,
            acquireLatencyHistogram: wireStats.acquireLatencyNs,
            releaseLatencyHistogram: wireStats.releaseLatencyNs,
            verbCounts: Object.fromEntries(Object.entries(accounting.flat()).map(([key, n]) => [key, BigInt(n)])),
            acquires: BigInt(stats.acquires),
            releases: BigInt(stats.releases),
            failures: BigInt(stats.acquireFailures + stats.releaseFailures),
            acquireFailures: BigInt(stats.acquireFailures),
            releaseFailures: BigInt(stats.releaseFailures),
            failuresByCode: Object.fromEntries([...stats.failuresByCode].map(([code, n]) => [code, BigInt(n)])),
            elapsedNs: BigInt(Math.round(elapsedNs)),
            applicationLog: appLog ? encodeAppLog(appLog) : '',
            // the phases protocols mark and the resets they make, for the driver's breakdown
            ...phaseTimingToWire(accounting.phases),
          }),
        },
      }),
    );
  }

  /** Stops the last run's node service and drops a prepared run; called by the node's shutdown. */
  async close(): Promise<void> {
    await this.slot.drop(`compute node ${this.deps.node} is closing`);
    await this.stopLingering();
  }

  private async stopLingering(): Promise<void> {
    const service = this.lingering;
    this.lingering = undefined;
    this.current = undefined;
    await service?.stop();
  }

  /** Every memory node's data region, in lock-table order (by node id); a ConfigError names a node without one. */
  private dataRegions(): DataRegions {
    const nodes = [...this.deps.memoryNodes].sort((a, b) => a.node - b.node);
    return nodes.map((description) => {
      const region = description.regions.find((r) => r.region === DATA_REGION);
      if (!region) throw new ConfigError([`memory node ${description.node} has no data region (region ${DATA_REGION}); restart it with this build (memory.dataBytes)`]);
      return { node: description.node, region: region.region, rkey: region.rkey };
    });
  }

  /** The protocol's lock table striped over the memory nodes' region 0, checked against its size. */
  private layoutFor(entryBytes: number, lockCount: number): LockTableLayout {
    const nodes = [...this.deps.memoryNodes].sort((a, b) => a.node - b.node);
    if (nodes.length === 0) throw new ConfigError(['this compute node knows no memory node (set compute.memoryNodes)']);
    const perNodeBytes = Math.ceil(lockCount / nodes.length) * entryBytes;
    const memoryNodes = nodes.map((description) => {
      const region = description.regions.find((r) => r.region === 0);
      if (!region) throw new ConfigError([`memory node ${description.node} has no lock-table region`]);
      if (region.sizeBytes < perNodeBytes) {
        throw new ConfigError([`memory node ${description.node} lock table holds ${region.sizeBytes} bytes; ${lockCount} locks of ${entryBytes} bytes need ${perNodeBytes} per node (raise memory.lockCount)`]);
      }
      return { node: description.node, region: 0, rkey: region.rkey, baseOffset: 0 };
    });
    return { memoryNodes, entryBytes, lockCount };
  }

  private clientPorts(client: number, layout: LockTableLayout, seed: number, switchPort: SwitchPort | undefined, tableViaVerbs = false): ClientPorts {
    const self = { node: this.deps.node, client };
    const memoryNodeIds = new Set(this.deps.memoryNodes.map((d) => d.node));
    const tables = this.deps.fabric.view();
    const verbs = new QueuePairVerbs({
      localNode: this.deps.node,
      post: this.gate.openSettling(tables.post),
      local: createLocalMemory(this.deps.memory, () => new Promise<void>((resolve) => setImmediate(resolve))),
    });
    return {
      self,
      tables,
      verbs: tableViaVerbs ? lockTableViaVerbs(verbs) : verbs,
      mailbox: this.deps.mailboxes.mailbox(client),
      ...(switchPort ? { switchPort } : {}),
      clock: this.clock,
      random: new SeededRandom((seed * 2_654_435_761 + this.deps.node * 65_537 + client) >>> 0),
      trace: this.deps.trace,
      locks: layout,
      descriptors: new FixedDescriptorDirectory(self, (node) => memoryNodeIds.has(node)),
    };
  }
}

/**
 * Test-only (MUTANT_LOCAL_VERBS_OPTION): the node's own lock table (region 0) looks remote, so a
 * client beside it takes the lock with verbs through the loopback; its own descriptors stay local.
 */
function lockTableViaVerbs(verbs: Verbs): Verbs {
  return {
    post: (...args) => verbs.post(...args),
    read: (...args) => verbs.read(...args),
    write: (...args) => verbs.write(...args),
    cas: (...args) => verbs.cas(...args),
    faa: (...args) => verbs.faa(...args),
    maskedCas: (...args) => verbs.maskedCas(...args),
    maskedFaa: (...args) => verbs.maskedFaa(...args),
    isLocal: (addr) => addr.region !== 0 && verbs.isLocal(addr),
    cpu: verbs.cpu,
  };
}

/**
 * Ends a server stream with an error status. grpc-js sends a stream's status from its 'error'
 * handler; `destroy(error)` would tear the stream down without any status, leaving the driver's
 * call open until its connection drops.
 */
function failCall(call: ServerWritableStream<Uint8Array, Uint8Array>, code: GrpcStatus, details: string): void {
  call.emit('error', grpcError(code, details));
}

/** gRPC status of a refused Prepare or Run. */
function statusOf(error: unknown): GrpcStatus {
  if (error instanceof ConfigError) return GrpcStatus.INVALID_ARGUMENT;
  if (!(error instanceof RunSlotError)) return GrpcStatus.INTERNAL;
  switch (error.code) {
    case 'request-differs':
      return GrpcStatus.INVALID_ARGUMENT;
    case 'dropped':
      return GrpcStatus.ABORTED;
    default:
      return GrpcStatus.FAILED_PRECONDITION;
  }
}

/**
 * The workload of a RunRequest. Zero clients is valid here (the workload spec itself wants at
 * least one): a node that hosts none of the run's clients still runs the run's node service.
 */
function runSpecOf(wire: WireWorkloadSpec): RunSpec {
  if (wire.clients !== 0) return runSpecFromWire(wire);
  // Validated as a one-client run; with no client there is no operation count or duration to bound.
  const bounded = wire.operations > 0n || wire.durationMs > 0n;
  const spec = runSpecFromWire({ ...wire, clients: 1, ...(bounded ? {} : { operations: 1n }) });
  const { operations: _operations, ...workload } = spec.workload;
  return { ...spec, workload: { ...(bounded ? spec.workload : workload), clients: 0 } };
}
