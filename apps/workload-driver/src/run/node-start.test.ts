import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { Server, ServerCredentials, status as GrpcStatus } from '@grpc/grpc-js';
import type { ServerUnaryCall, ServerWritableStream, UntypedServiceImplementation, sendUnaryData } from '@grpc/grpc-js';
import { grpcError, rawMethodOf } from '@lockfabric/live';
import { waitFor } from '@lockfabric/testkit';
import { ComputeNodeService, PrepareRunRequestSchema, PrepareRunResponseSchema, RunEventSchema, RunRequestSchema, RunResultSchema, WorkloadSpecSchema } from '@lockfabric/wire';
import type { RunRequest } from '@lockfabric/wire';
import { afterEach, describe, expect, it } from 'vitest';
import type { ProcessRecord } from '../cluster/local-cluster.js';
import { NodePrepareError, startOnNodes } from './node-start.js';
import type { NodeRunPlan } from './node-start.js';

type PrepareBehaviour = 'ok' | 'unimplemented' | { readonly refuse: GrpcStatus } | { readonly holdUntil: Promise<void> };

/**
 * A compute node's ComputeNodeService that records, in one log shared by all fake nodes, when it
 * received a Prepare, answered it, and received a Run — the order is what the barrier is about.
 */
async function fakeNode(node: number, log: string[], prepare: PrepareBehaviour) {
  const received: { prepare?: RunRequest; run?: RunRequest } = {};
  const methods: Record<string, ReturnType<typeof rawMethodOf>> = { run: rawMethodOf(ComputeNodeService.method.run) };
  const handlers: UntypedServiceImplementation = {
    run: (call: ServerWritableStream<Uint8Array, Uint8Array>) => {
      received.run = fromBinary(RunRequestSchema, call.request);
      log.push(`run:${node}`);
      const result = create(RunResultSchema, { acquires: BigInt(received.run.spec?.clients ?? 0) });
      call.write(toBinary(RunEventSchema, create(RunEventSchema, { event: { case: 'result', value: result } })));
      call.end();
    },
  };
  if (prepare !== 'unimplemented') {
    methods['prepare'] = rawMethodOf(ComputeNodeService.method.prepare);
    handlers['prepare'] = (call: ServerUnaryCall<Uint8Array, Uint8Array>, callback: sendUnaryData<Uint8Array>) => {
      const run = fromBinary(PrepareRunRequestSchema, call.request).run;
      received.prepare = run;
      log.push(`prepare:${node}`);
      void (async () => {
        if (typeof prepare === 'object' && 'holdUntil' in prepare) await prepare.holdUntil;
        if (typeof prepare === 'object' && 'refuse' in prepare) return callback(grpcError(prepare.refuse, `node ${node} is busy`));
        log.push(`prepared:${node}`);
        callback(null, toBinary(PrepareRunResponseSchema, create(PrepareRunResponseSchema, { runId: run?.runId ?? '', expiresInMs: 60_000n })));
      })();
    };
  }
  const server = new Server();
  server.addService(methods, handlers);
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  const record: ProcessRecord = { name: `compute-${node}`, role: 'compute', node, pid: 0, log: '', argv: [], grpc: port };
  return { record, received, server };
}

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.forceShutdown();
});

async function cluster(behaviours: readonly PrepareBehaviour[]) {
  const log: string[] = [];
  const nodes = await Promise.all(behaviours.map((b, i) => fakeNode(i + 1, log, b)));
  servers.push(...nodes.map((n) => n.server));
  const plans: NodeRunPlan[] = nodes.map((n, i) => ({
    compute: n.record,
    request: create(RunRequestSchema, { runId: 'run-7', recordHistory: true, spec: create(WorkloadSpecSchema, { protocol: 'parlock', clients: i === 2 ? 0 : 2, operations: 10n }), peers: { 0: 'm:1' } }),
  }));
  return { log, nodes, plans };
}

const options = { barrier: true, tolerateNodeFailures: false, onOps: () => undefined };

describe('startOnNodes: the driver side of the start barrier', () => {
  it('sends no Run before every node answered its Prepare, even when one node is slow to prepare', async () => {
    let release!: () => void;
    const slow = new Promise<void>((resolve) => (release = resolve));
    const { log, plans } = await cluster(['ok', { holdUntil: slow }]);
    const started = startOnNodes(plans, { ...options, beforeStart: async () => void log.push('start-asked') });
    // Node 1 answered, node 2 is still preparing: the driver must still be waiting.
    await waitFor(() => log.includes('prepared:1') && log.includes('prepare:2'), { what: "node 1's answer and node 2's Prepare" });
    release();
    const result = await started;
    const lastPrepared = log.indexOf('prepared:2');
    expect(lastPrepared).toBeGreaterThan(log.indexOf('prepared:1'));
    for (const entry of ['run:1', 'run:2', 'start-asked']) expect(log.indexOf(entry)).toBeGreaterThan(lastPrepared);
    expect(result.outcomes.map((o) => o.result?.acquires)).toEqual([2n, 2n]);
    expect(result.failedNodes).toEqual([]);
    expect(result.unpreparedNodes).toEqual([]);
  });

  it('runs exactly the request it prepared, marked prepared (a node that lost it refuses instead of running unprepared)', async () => {
    const { nodes, plans } = await cluster(['ok', 'ok']);
    await startOnNodes(plans, options);
    for (const [i, node] of nodes.entries()) {
      expect(node.received.run?.prepared).toBe(true);
      expect(toBinary(RunRequestSchema, node.received.run!)).toEqual(toBinary(RunRequestSchema, node.received.prepare!));
      expect(node.received.run?.spec?.clients).toBe(plans[i]!.request.spec?.clients);
    }
  });

  // The deterministic proof that the driver waits for every Prepare: a driver that ran each node as
  // soon as its own Prepare answered would have started node 1 here.
  it('a node that refuses Prepare fails the run before any node is told to run', async () => {
    const { log, plans } = await cluster(['ok', { refuse: GrpcStatus.FAILED_PRECONDITION }]);
    const failure = startOnNodes(plans, options);
    await expect(failure).rejects.toBeInstanceOf(NodePrepareError);
    await expect(failure).rejects.toThrow(/compute node 2 \(compute-2\) did not prepare run run-7: .*node 2 is busy/);
    expect(log.filter((e) => e.startsWith('run:'))).toEqual([]);
  });

  it('with tolerateNodeFailures, a node that refuses Prepare is reported and the others run', async () => {
    const { log, plans } = await cluster(['ok', { refuse: GrpcStatus.UNAVAILABLE }]);
    const result = await startOnNodes(plans, { ...options, tolerateNodeFailures: true });
    expect(result.failedNodes.map((f) => f.node)).toEqual([2]);
    expect(log.filter((e) => e.startsWith('run:'))).toEqual(['run:1']);
    expect(result.outcomes[1]?.result).toBeUndefined();
  });

  it('a node without Prepare (an older version) runs one-phase, unmarked, and is reported; without clients it gets no Run', async () => {
    const { log, nodes, plans } = await cluster(['ok', 'unimplemented', 'unimplemented']);
    const result = await startOnNodes(plans, options);
    expect(result.unpreparedNodes).toEqual([2, 3]);
    expect(nodes[1]!.received.run?.prepared).toBe(false);
    expect(nodes[0]!.received.run?.prepared).toBe(true);
    expect(log.filter((e) => e.startsWith('run:')).sort()).toEqual(['run:1', 'run:2']);
  });

  it('without the barrier every node gets a one-phase Run and no Prepare', async () => {
    const { log, nodes, plans } = await cluster(['ok', 'ok']);
    await startOnNodes(plans, { ...options, barrier: false });
    expect(log.filter((e) => e.startsWith('prepare'))).toEqual([]);
    expect(nodes.map((n) => n.received.run?.prepared)).toEqual([false, false]);
  });
});
