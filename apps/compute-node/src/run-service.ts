import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { Server, ServerCredentials, status as GrpcStatus } from '@grpc/grpc-js';
import type { ServerUnaryCall, ServerWritableStream, sendUnaryData } from '@grpc/grpc-js';
import { HistoryRecorder } from '@lockfabric/check';
import { FixedDescriptorDirectory, QueuePairVerbs, createLocalMemory } from '@lockfabric/fabric';
import type { NodeMemory } from '@lockfabric/fabric';
import { availableProtocols, protocolById } from '@lockfabric/lock-catalog';
import { SERVICE_CLIENT } from '@lockfabric/locks-common';
import type { NodeService, NodeServiceContext, ProtocolOptions } from '@lockfabric/locks-common';
import { grpcError, rawMethodOf } from '@lockfabric/live';
import type { Logger, MailboxHub, MemoryDescription } from '@lockfabric/live';
import { ConfigError } from '@lockfabric/ports';
import type { ClientPorts, LockTableLayout, NodeId, SwitchPort, Trace } from '@lockfabric/ports';
import { RealClock, SeededRandom } from '@lockfabric/sim';
import {
  ComputeNodeService,
  DescribeComputeNodeResponseSchema,
  HistoryChunkSchema,
  RunEventSchema,
  RunProgressSchema,
  RunRequestSchema,
  RunResultSchema,
} from '@lockfabric/wire';
import type { RunEvent, RunRequest } from '@lockfabric/wire';
import { RunStats, VerbAccounting, historyEventToWire, runClients, runSpecFromWire, summarize } from '@lockfabric/workloads';
import type { LiveFabric } from './live-fabric.js';
import { VerbGate } from './verb-gate.js';


export interface CurrentRun {
  readonly protocol: string;
  readonly options: ProtocolOptions | undefined;
  readonly locks: LockTableLayout;
}

const runMethod = rawMethodOf(ComputeNodeService.method.run);
const describeMethod = rawMethodOf(ComputeNodeService.method.describe);
const HISTORY_CHUNK_EVENTS = 8_192;
const PROGRESS_INTERVAL_MS = 250;

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
  /** Compute nodes the coordinator declared dead, for node services (lock servers) to recover their locks. */
  readonly failures?: NodeServiceContext['failures'];
}

/** ComputeNodeService: runs the driver's workloads on this node's lock clients, one run at a time. */
export class ComputeRunService {
  private busy = false;
  private readonly clock = new RealClock();
  /**
   * The last run's node service (lock manager, agent pool). It outlives this node's clients: peers'
   * clients of the same run may still need the locks homed or the agents living here, and the
   * driver ends a run only when every node has finished. It stops when the next run starts or the
   * node closes.
   */
  private lingering: NodeService | undefined;
  /** The protocol, options and lock layout of the running (or lingering) run, for recovery responders. */
  current: CurrentRun | undefined;
  runs = 0;
  /** Rejoin (rejoin-watch.ts): the running run's abort, and the gate that fences its clients' verbs locally. */
  private abortRun: AbortController | undefined;
  private readonly gate: VerbGate;

  constructor(private readonly deps: RunServiceDeps) {
    this.gate = new VerbGate(deps.node);
  }

  async listen(port: number): Promise<{ server: Server; port: number }> {
    const server = new Server();
    server.addService(
      { run: runMethod, describe: describeMethod },
      {
        run: (call: ServerWritableStream<Uint8Array, Uint8Array>) => void this.run(call),
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
      server.bindAsync(`0.0.0.0:${port}`, ServerCredentials.createInsecure(), (error, actual) => (error ? reject(error) : resolve(actual))),
    );
    return { server, port: bound };
  }

  private async run(call: ServerWritableStream<Uint8Array, Uint8Array>): Promise<void> {
    let request: RunRequest;
    try {
      request = fromBinary(RunRequestSchema, call.request);
    } catch (error) {
      this.deps.logger.warn(`malformed RunRequest from ${call.getPeer()}: ${String(error)}`);
      call.destroy(grpcError(GrpcStatus.INVALID_ARGUMENT, `malformed RunRequest: ${String(error)}`));
      return;
    }
    if (this.busy) {
      call.destroy(grpcError(GrpcStatus.FAILED_PRECONDITION, `compute node ${this.deps.node} is already running a workload`));
      return;
    }
    this.busy = true;
    const abort = new AbortController();
    this.abortRun = abort;
    call.on('cancelled', () => abort.abort(new Error('driver cancelled the run')));
    try {
      await this.execute(request, call, abort.signal);
      call.end();
    } catch (error) {
      const code = error instanceof ConfigError ? GrpcStatus.INVALID_ARGUMENT : GrpcStatus.INTERNAL;
      this.deps.logger.warn(`run ${request.runId} failed: ${error instanceof Error ? error.message : String(error)}`);
      call.destroy(grpcError(code, error instanceof Error ? error.message : String(error)));
    } finally {
      this.busy = false;
      if (this.abortRun === abort) this.abortRun = undefined;
    }
  }

  /**
   * Retires this node's incarnation after the coordinator declared it dead (rejoin-watch.ts): the
   * running run is aborted (acquires that honour the signal end with LockAbortedError), every verb
   * its clients post from now on completes `unreachable` without leaving the node, the verbs already
   * in flight are awaited (at most `drainMs`) so none reaches a memory node after the new
   * incarnation is admitted, and the protocol's node service (lock server, agents) is dropped.
   */
  async retire(reason: string, drainMs = 5_000): Promise<void> {
    this.gate.retire(reason);
    this.abortRun?.abort(new Error(`compute node ${this.deps.node} was declared dead: ${reason}`));
    if (!(await this.gate.drain(drainMs))) this.deps.logger.warn(`compute node ${this.deps.node}: ${this.gate.inflightBatches} verb batch(es) still in flight after ${drainMs} ms; rejoining anyway`);
    await this.stopLingering();
  }

  private async execute(request: RunRequest, call: ServerWritableStream<Uint8Array, Uint8Array>, signal: AbortSignal): Promise<void> {
    if (!request.spec) throw new ConfigError(['RunRequest has no workload spec']);
    const spec = runSpecFromWire(request.spec);
    const protocol = protocolById(spec.protocol);
    if (spec.workload.clients > this.deps.maxClients) {
      throw new ConfigError([`compute node ${this.deps.node} hosts at most ${this.deps.maxClients} clients, the run asks for ${spec.workload.clients}`]);
    }
    for (const [node, address] of Object.entries(request.peers)) this.deps.fabric.setEndpoint(Number(node), address);
    await this.deps.fabric.rebindMemoryNodes();
    const layout = this.layoutFor(protocol.entryBytes, spec.workload.locks);
    // The protocol's node service (agent pool, lock server) starts before this node's clients.
    const memoryNodeIds = this.deps.memoryNodes.map((d) => d.node);
    const computeNodeIds = Object.keys(request.peers).map(Number).filter((id) => !memoryNodeIds.includes(id));
    if (!computeNodeIds.includes(this.deps.node)) computeNodeIds.push(this.deps.node);
    computeNodeIds.sort((a, b) => a - b);
    await this.stopLingering();
    this.current = { protocol: spec.protocol, options: spec.options, locks: layout };
    const service: NodeService | undefined = protocol.services?.compute?.(
      { ports: this.clientPorts(SERVICE_CLIENT, layout, spec.workload.seed), memoryNodes: memoryNodeIds, computeNodes: computeNodeIds, ...(this.deps.failures ? { failures: this.deps.failures } : {}) },
      spec.options,
    );
    const ports = Array.from({ length: spec.workload.clients }, (_, i) => this.clientPorts(i, layout, spec.workload.seed));
    const recorder = new HistoryRecorder();
    const stats = new RunStats();
    const accounting = new VerbAccounting();
    const send = (event: RunEvent) => call.write(toBinary(RunEventSchema, event));
    const startMs = Date.now();
    const progress = setInterval(() => {
      send(create(RunEventSchema, { event: { case: 'progress', value: create(RunProgressSchema, { opsDone: BigInt(stats.acquires), elapsedMs: BigInt(Date.now() - startMs) }) } }));
    }, PROGRESS_INTERVAL_MS);
    let result;
    try {
      result = await runClients({ protocol, protocolOptions: spec.options, spec: spec.workload, ports, recorder, stats, clock: this.clock, signal, accounting });
    } finally {
      clearInterval(progress);
      this.lingering = service;
    }
    this.runs++;
    if (request.recordHistory) {
      const events = recorder.events();
      for (let i = 0; i < events.length; i += HISTORY_CHUNK_EVENTS) {
        const chunk = create(HistoryChunkSchema, { events: events.slice(i, i + HISTORY_CHUNK_EVENTS).map(historyEventToWire) });
        send(create(RunEventSchema, { event: { case: 'history', value: chunk } }));
      }
    }
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
          }),
        },
      }),
    );
  }

  /** Stops the last run's node service; called by the node's shutdown. */
  async close(): Promise<void> {
    await this.stopLingering();
  }

  private async stopLingering(): Promise<void> {
    const service = this.lingering;
    this.lingering = undefined;
    this.current = undefined;
    await service?.stop();
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

  private clientPorts(client: number, layout: LockTableLayout, seed: number): ClientPorts {
    const self = { node: this.deps.node, client };
    const memoryNodeIds = new Set(this.deps.memoryNodes.map((d) => d.node));
    return {
      self,
      verbs: new QueuePairVerbs({
        localNode: this.deps.node,
        post: this.gate.open((batch, options) => this.deps.fabric.post(batch, options)),
        local: createLocalMemory(this.deps.memory, () => new Promise<void>((resolve) => setImmediate(resolve))),
      }),
      mailbox: this.deps.mailboxes.mailbox(client),
      ...(this.deps.switchPort ? { switchPort: this.deps.switchPort } : {}),
      clock: this.clock,
      random: new SeededRandom((seed * 2_654_435_761 + this.deps.node * 65_537 + client) >>> 0),
      trace: this.deps.trace,
      locks: layout,
      descriptors: new FixedDescriptorDirectory(self, (node) => memoryNodeIds.has(node)),
    };
  }
}
