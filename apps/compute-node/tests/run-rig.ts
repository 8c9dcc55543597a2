import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { Client, credentials } from '@grpc/grpc-js';
import type { Server, ServiceError } from '@grpc/grpc-js';
import type { HistoryEvent } from '@lockfabric/check';
import { Nic, NodeMemory, registerDescriptorRegion } from '@lockfabric/fabric';
import { MailboxHub, connectNats, createSubjects, rawMethodOf, silentLogger } from '@lockfabric/live';
import { noopTrace } from '@lockfabric/ports';
import type { LockPacket, NodeId, SwitchPort } from '@lockfabric/ports';
import { startNatsServer } from '@lockfabric/testkit';
import type { NatsServerHandle } from '@lockfabric/testkit';
import { ComputeNodeService, PrepareRunRequestSchema, PrepareRunResponseSchema, RunEventSchema, RunRequestSchema } from '@lockfabric/wire';
import type { PrepareRunResponse, RunRequest, RunResult } from '@lockfabric/wire';
import { historyEventFromWire, runSpecToWire } from '@lockfabric/workloads';
import type { WorkloadSpec } from '@lockfabric/workloads';
import type { NatsConnection } from '@nats-io/transport-node';
import { LiveFabric } from '@lockfabric/run-host';
import { ComputeRunService } from '@lockfabric/run-host';
import type { Schedule } from '@lockfabric/run-host';

/**
 * The `forward` switch program in one process: a packet goes to the handlers of its `dst` machine,
 * later (setImmediate), in the order sent — as the real switch and NATS deliver one sender's packets.
 */
export class ForwardSwitch {
  private readonly handlers = new Map<NodeId, Set<(packet: LockPacket) => void>>();

  port(machine: NodeId): SwitchPort {
    return {
      machine,
      send: (packet) => this.inject(packet),
      onPacket: (handler) => {
        let set = this.handlers.get(machine);
        if (!set) this.handlers.set(machine, (set = new Set()));
        set.add(handler);
        return () => set.delete(handler);
      },
    };
  }

  /** Handlers subscribed for `machine` (a node service that stopped has unsubscribed). */
  listeners(machine: NodeId): number {
    return this.handlers.get(machine)?.size ?? 0;
  }

  inject(packet: LockPacket): void {
    const dst = packet.dst;
    if (dst === undefined) return;
    setImmediate(() => {
      for (const handler of this.handlers.get(dst) ?? []) handler(packet);
    });
  }
}

export interface RigNode {
  readonly node: NodeId;
  readonly service: ComputeRunService;
  readonly address: string;
}

/** The memory node every compute node knows (no process: the switch protocols used here never touch it). */
const MEMORY_NODE = 0;
const raw = {
  run: rawMethodOf(ComputeNodeService.method.run),
  prepare: rawMethodOf(ComputeNodeService.method.prepare),
};

/**
 * Compute nodes 1 and 2 as ComputeRunServices in this process, each behind its own gRPC server,
 * with real NATS mailboxes and an in-process forward switch: what the driver talks to, minus the
 * process boundaries.
 */
export async function startRig(options: { schedule?: Schedule; preparedTimeoutMs?: number } = {}) {
  const nats: NatsServerHandle = await startNatsServer();
  const nc: NatsConnection = await connectNats({ servers: nats.url, name: 'run-barrier-test', logger: silentLogger });
  const subjects = createSubjects(`runbarrier${process.pid}`);
  const fabricSwitch = new ForwardSwitch();
  const hubs: MailboxHub[] = [];
  const servers: Server[] = [];
  const fabrics: LiveFabric[] = [];
  const nodes: RigNode[] = [];
  for (const node of [1, 2]) {
    const memory = new NodeMemory(node);
    registerDescriptorRegion(memory, false);
    const fabric = new LiveFabric(node, new Nic(memory), silentLogger);
    const mailboxes = new MailboxHub({ nc, subjects, node, logger: silentLogger });
    const service = new ComputeRunService({
      node,
      maxClients: 8,
      fabric,
      memory,
      memoryNodes: [{ node: MEMORY_NODE, regions: [{ region: 0, rkey: 1, sizeBytes: 1 << 20 }] }],
      mailboxes,
      trace: noopTrace,
      logger: silentLogger,
      switchPort: fabricSwitch.port(node),
      ...(options.schedule ? { schedule: options.schedule } : {}),
      ...(options.preparedTimeoutMs !== undefined ? { preparedTimeoutMs: options.preparedTimeoutMs } : {}),
    });
    const { server, port } = await service.listen(0, '127.0.0.1');
    hubs.push(mailboxes);
    servers.push(server);
    fabrics.push(fabric);
    nodes.push({ node, service, address: `127.0.0.1:${port}` });
  }
  await nc.flush();
  return {
    nodes,
    fabricSwitch,
    /** Nodes 1 and 2's mailbox hubs. */
    hubs,
    async stop(): Promise<void> {
      for (const server of servers) server.forceShutdown();
      for (const { service } of nodes) await service.close();
      for (const fabric of fabrics) fabric.close();
      for (const hub of hubs) await hub.close();
      await nc.close();
      await nats.stop();
    },
  };
}

/** Every node of the rig, and the memory node, as the driver lists them in `peers`. */
const PEERS: Record<number, string> = { [MEMORY_NODE]: '127.0.0.1:1', 1: '127.0.0.1:1', 2: '127.0.0.1:1' };

export const workload = (overrides: Partial<WorkloadSpec> = {}): WorkloadSpec => ({
  clients: 1,
  locks: 1,
  readRatio: 0,
  distribution: 'uniform',
  operations: 1,
  thinkNs: 0,
  criticalSectionNs: 0,
  seed: 1,
  timeoutMs: 20_000,
  ...overrides,
});

export function runRequest(runId: string, protocol: string, spec: WorkloadSpec, prepared = false): RunRequest {
  return create(RunRequestSchema, {
    runId,
    prepared,
    recordHistory: true,
    peers: PEERS,
    spec: runSpecToWire({ protocol, workload: spec, options: { retransmitNs: '20000000', maxAttempts: '400' } }),
  });
}

/** A gRPC failure as the driver sees it. */
export interface CallFailure {
  readonly code: number;
  readonly details: string;
}

export function prepareOn(address: string, run: RunRequest): Promise<PrepareRunResponse> {
  return prepareBytes(address, toBinary(PrepareRunRequestSchema, create(PrepareRunRequestSchema, { run })));
}

export function prepareBytes(address: string, bytes: Uint8Array): Promise<PrepareRunResponse> {
  const client = new Client(address, credentials.createInsecure());
  return new Promise<PrepareRunResponse>((resolve, reject) => {
    client.makeUnaryRequest(raw.prepare.path, raw.prepare.requestSerialize, raw.prepare.responseDeserialize, bytes, (error: ServiceError | null, response?: Uint8Array) => {
      if (error) reject({ code: error.code, details: error.details } satisfies CallFailure);
      else resolve(fromBinary(PrepareRunResponseSchema, response ?? new Uint8Array()));
    });
  }).finally(() => client.close());
}

export interface NodeRun {
  readonly done: Promise<{ history: HistoryEvent[]; result: RunResult | undefined }>;
  /** Acquires the node reported so far (progress events, every 250 ms). */
  opsDone(): number;
}

export function runOn(address: string, request: RunRequest): NodeRun {
  const client = new Client(address, credentials.createInsecure());
  const history: HistoryEvent[] = [];
  let result: RunResult | undefined;
  let ops = 0;
  const done = new Promise<{ history: HistoryEvent[]; result: RunResult | undefined }>((resolve, reject) => {
    const call = client.makeServerStreamRequest(raw.run.path, raw.run.requestSerialize, raw.run.responseDeserialize, toBinary(RunRequestSchema, request));
    call.on('data', (bytes: Uint8Array) => {
      const event = fromBinary(RunEventSchema, bytes);
      if (event.event.case === 'progress') ops = Number(event.event.value.opsDone);
      else if (event.event.case === 'history') for (const e of event.event.value.events) history.push(historyEventFromWire(e));
      else if (event.event.case === 'result') result = event.event.value;
    });
    call.on('error', (error: ServiceError) => reject({ code: error.code, details: error.details } satisfies CallFailure));
    call.on('end', () => resolve({ history, result }));
  }).finally(() => client.close());
  return { done, opsDone: () => ops };
}
