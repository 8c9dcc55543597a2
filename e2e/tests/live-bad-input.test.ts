import { toBinary } from '@bufbuild/protobuf';
import { Client } from '@grpc/grpc-js';
import type { ClientDuplexStream } from '@grpc/grpc-js';
import { clientCredentials, rawMethodOf } from '@lockfabric/live';
import { MemoryService, WorkRequestBatchSchema, completionFromWire, decodeCompletionBatch, workRequestBatchToWire, workRequestToWire } from '@lockfabric/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAlive } from '@lockfabric/workload-driver';
import type { ProcessRecord } from '@lockfabric/workload-driver';
import { withLiveCluster } from './live-cluster.js';

const connect = rawMethodOf(MemoryService.method.connect);

/** One raw queue-pair stream to a memory-node process, reading answers one frame at a time. */
function openStream(address: string): { call: ClientDuplexStream<Uint8Array, Uint8Array>; next(): Promise<Uint8Array>; close(): void } {
  const client = new Client(address, clientCredentials());
  const call = client.makeBidiStreamRequest(connect.path, connect.requestSerialize, connect.responseDeserialize) as ClientDuplexStream<Uint8Array, Uint8Array>;
  const frames: Uint8Array[] = [];
  const waiters: ((frame: Uint8Array) => void)[] = [];
  call.on('data', (frame: Uint8Array) => {
    const waiter = waiters.shift();
    if (waiter) waiter(frame);
    else frames.push(frame);
  });
  call.on('error', () => undefined);
  return {
    call,
    next: () => {
      const frame = frames.shift();
      return frame ? Promise.resolve(frame) : new Promise((resolve) => waiters.push(resolve));
    },
    close: () => {
      call.end();
      client.close();
    },
  };
}

async function metric(process: ProcessRecord, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${process.health}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(name))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

describe('live: bad input is counted, logged and dropped; the service answers the next request', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  let memory: ProcessRecord;
  beforeAll(async () => {
    cluster = await withLiveCluster({ withSwitch: false, withCoordinator: false, computeNodes: 1 });
    memory = cluster.state.processes.find((p) => p.role === 'memory')!;
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('garbage bytes on a verbs stream get a bad-request completion; the same stream then serves a CAS', async () => {
    const before = await metric(memory, 'lockfabric_decode_errors_total');
    const stream = openStream(`127.0.0.1:${memory.grpc}`);
    try {
      stream.call.write(Uint8Array.from([0xff, 0xff, 0xff, 0x0f, 0x08, 0x99, 0x12]));
      const answer = decodeCompletionBatch(await stream.next(), 'test');
      expect(answer.completions.map((c) => completionFromWire(c, 'test').status)).toEqual(['bad-request']);

      // The same queue pair: a CAS on lock 0 of the lock table (region 0) succeeds.
      const rkey = (await describeRkey(`127.0.0.1:${memory.grpc}`)) ?? 0;
      const cas = workRequestToWire({ op: 'cas', addr: { node: 0, region: 0, rkey, offset: 0 }, compare: 0n, swap: 7n }, 1);
      stream.call.write(toBinary(WorkRequestBatchSchema, workRequestBatchToWire(1, [cas], undefined)));
      const ok = decodeCompletionBatch(await stream.next(), 'test').completions.map((c) => completionFromWire(c, 'test'));
      expect(ok).toMatchObject([{ status: 'ok', value: 0n }]);

      // A verb with the wrong rkey is an error completion, not a crash.
      const wrong = workRequestToWire({ op: 'faa', addr: { node: 0, region: 0, rkey: (rkey ^ 1) >>> 0, offset: 0 }, add: 1n }, 2);
      stream.call.write(toBinary(WorkRequestBatchSchema, workRequestBatchToWire(1, [wrong], undefined)));
      const refused = decodeCompletionBatch(await stream.next(), 'test').completions.map((c) => completionFromWire(c, 'test'));
      expect(refused[0]?.status).toBe('bad-rkey');
    } finally {
      stream.close();
    }
    expect(await metric(memory, 'lockfabric_decode_errors_total')).toBeGreaterThan(before);
    expect(isAlive(memory.pid)).toBe(true);
  });
});

async function describeRkey(address: string): Promise<number | undefined> {
  const { MemoryQueuePair, silentLogger } = await import('@lockfabric/live');
  const qp = await MemoryQueuePair.connect(address, 99, { logger: silentLogger });
  try {
    return (await qp.describe()).regions.find((r) => r.region === 0)?.rkey;
  } finally {
    qp.close();
  }
}
