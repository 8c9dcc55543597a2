import { create, toBinary } from '@bufbuild/protobuf';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import type { ServerWritableStream } from '@grpc/grpc-js';
import { rawMethodOf } from '@lockfabric/live';
import { ComputeNodeService, HistoryChunkSchema, RunEventSchema, RunProgressSchema, RunRequestSchema, RunResultSchema, WorkloadSpecSchema } from '@lockfabric/wire';
import { historyEventToWire } from '@lockfabric/workloads';
import { afterEach, describe, expect, it } from 'vitest';
import type { ProcessRecord } from '../cluster/local-cluster.js';
import { startOnNodes } from './node-start.js';
import type { NodeRunPlan } from './node-start.js';

type RunBehaviour = 'result' | 'dies-after-history' | 'silent';

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.forceShutdown();
});

const event = (e: Parameters<typeof create<typeof RunEventSchema>>[1]) => toBinary(RunEventSchema, create(RunEventSchema, e));

/** A compute node whose Run streams one history chunk and progress, then ends, dies, or goes silent. */
async function fakeNode(node: number, behaviour: RunBehaviour): Promise<NodeRunPlan> {
  const server = new Server();
  server.addService(
    { run: rawMethodOf(ComputeNodeService.method.run) },
    {
      run: (call: ServerWritableStream<Uint8Array, Uint8Array>) => {
        const history = [
          { client: `${node}/0`, lock: 3, mode: 'exclusive' as const, op: 'acquire' as const, phase: 'invoke' as const, timeNs: 100 },
          { client: `${node}/0`, lock: 3, mode: 'exclusive' as const, op: 'acquire' as const, phase: 'ok' as const, timeNs: 200 },
        ];
        call.write(event({ event: { case: 'history', value: create(HistoryChunkSchema, { events: history.map(historyEventToWire) }) } }));
        call.write(event({ event: { case: 'progress', value: create(RunProgressSchema, { opsDone: 1n }) } }));
        if (behaviour === 'result') {
          call.write(event({ event: { case: 'result', value: create(RunResultSchema, { acquires: 1n }) } }));
          call.end();
        } else if (behaviour === 'dies-after-history') {
          // The process dies: its connections drop with no status.
          setTimeout(() => server.forceShutdown(), 50);
        }
      },
    },
  );
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  servers.push(server);
  const compute: ProcessRecord = { name: `compute-${node}`, role: 'compute', node, pid: 0, log: '', argv: [], grpc: port };
  return { compute, request: create(RunRequestSchema, { runId: 'run-9', recordHistory: true, spec: create(WorkloadSpecSchema, { protocol: 'caslock', clients: 1, operations: 10n }) }) };
}

const options = { barrier: false, tolerateNodeFailures: true, onOps: () => undefined, nowNs: () => 5_000 };

describe('startOnNodes under node failures', () => {
  it('keeps what a node streamed before it died, with when and how it failed, and the others’ results', async () => {
    const plans = [await fakeNode(1, 'result'), await fakeNode(2, 'dies-after-history')];
    const { outcomes, failedNodes } = await startOnNodes(plans, options);
    expect(outcomes[0]?.result?.acquires).toBe(1n);
    expect(outcomes[1]?.result).toBeUndefined();
    expect(outcomes[1]?.history.map((e) => e.phase)).toStrictEqual(['invoke', 'ok']);
    expect(failedNodes).toHaveLength(1);
    expect(failedNodes[0]?.run).toMatchObject({ node: 2, name: 'compute-2', observedAtNs: 5_000, opsReported: 1, historyEvents: 2, lastEventNs: 200 });
  });

  it('gives up on a silent node once the grace after the last other node has passed, keeping its history', async () => {
    const plans = [await fakeNode(1, 'result'), await fakeNode(2, 'silent')];
    const { outcomes, failedNodes } = await startOnNodes(plans, { ...options, stragglerGraceMs: 100 });
    expect(outcomes[1]?.history).toHaveLength(2);
    expect(failedNodes.map((f) => f.node)).toStrictEqual([2]);
    expect(failedNodes[0]?.error).toMatch(/no result 100 ms after the last other compute node finished/);
  });

  it('without tolerateNodeFailures, a node that dies fails the run', async () => {
    const plans = [await fakeNode(1, 'result'), await fakeNode(2, 'dies-after-history')];
    await expect(startOnNodes(plans, { ...options, tolerateNodeFailures: false })).rejects.toThrow(/compute node 2 \(compute-2\)/);
  });
});

describe('startOnNodes: when to give up on a silent node', () => {
  it('a failed node starts no grace: a node still running after it is not cancelled', async () => {
    const plans = [await fakeNode(1, 'dies-after-history'), await fakeNode(2, 'silent')];
    const started = startOnNodes(plans, { ...options, stragglerGraceMs: 50, runDeadlineMs: 600 });
    const result = await started;
    // Node 2 was given up on at the run's deadline, not 50 ms after node 1 died.
    expect(result.failedNodes.find((f) => f.node === 2)?.error).toMatch(/no result 600 ms after the run started/);
  });

  it('a run bounded by time: a node that finished early starts no grace either, the deadline decides', async () => {
    const plans = [await fakeNode(1, 'result'), await fakeNode(2, 'silent')];
    const result = await startOnNodes(plans, { ...options, stragglerGraceMs: 50, runDeadlineMs: 600 });
    // Node 1's early result (a node fenced after a long pause ends so) did not cut node 2 off.
    expect(result.failedNodes.map((f) => f.node)).toStrictEqual([2]);
    expect(result.failedNodes[0]?.error).toMatch(/no result 600 ms after the run started/);
  });
});
