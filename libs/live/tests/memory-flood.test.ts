import { create, toBinary } from '@bufbuild/protobuf';
import { Client, credentials } from '@grpc/grpc-js';
import { MemoryService, Opcode, WorkRequestBatchSchema, WorkRequestSchema } from '@lockfabric/wire';
import { afterEach, describe, expect, it } from 'vitest';
import { rawMethodOf, toBuffer } from '../src/grpc-raw.js';
import { MalformedInputCounter } from '../src/malformed-input.js';
import { startMemoryServer } from '../src/memory-server.js';
import { FakeExecutor, memoryLogger, waitFor } from './support.js';

/**
 * One peer floods a real memory server (real gRPC port) with valid verb batches while another
 * submits a few. Policy (docs/decisions/0006-bounded-ingress-under-floods.md): each queue pair is
 * its own stream with at most `maxInFlightBatches` unanswered, so a flood waits in its own
 * transport window, not in a queue shared with other peers.
 */
const FLOODER = 1;
const VICTIM = 2;
const BOUND = 8;
const FLOOD = 2000;
const VICTIM_BATCHES = 20;

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function frame(initiator: number, id: number): Uint8Array {
  return toBinary(WorkRequestBatchSchema, create(WorkRequestBatchSchema, { initiator, requests: [create(WorkRequestSchema, { id, opcode: Opcode.FAA, node: 9, rkey: 77, offset: BigInt(8 * initiator), addLo: 1n })] }));
}

function stream(address: string) {
  const client = new Client(address, credentials.createInsecure());
  const method = rawMethodOf(MemoryService.method.connect);
  const call = client.makeBidiStreamRequest<Uint8Array, Uint8Array>(method.path, toBuffer, (b: Buffer) => b);
  call.on('error', () => {});
  let answered = 0;
  call.on('data', () => answered++);
  cleanups.push(() => {
    call.cancel();
    client.close();
  });
  return { call, answered: () => answered };
}

async function flood(maxInFlightBatches: number) {
  const executor = new FakeExecutor();
  const server = await startMemoryServer({ executor, host: '127.0.0.1', logger: memoryLogger(), malformed: new MalformedInputCounter({ logger: memoryLogger() }), maxInFlightBatches });
  cleanups.push(() => server.kill());
  const flooder = stream(server.address);
  const victim = stream(server.address);
  // The memory is busy (gate held) while the flooder writes everything at once, ignoring
  // backpressure; the victim's batches arrive behind the flood.
  executor.hold();
  for (let i = 0; i < FLOOD; i++) flooder.call.write(frame(FLOODER, i));
  await waitFor(() => server.stats().inFlightPeak >= BOUND);
  for (let i = 0; i < VICTIM_BATCHES; i++) victim.call.write(frame(VICTIM, i));
  await waitFor(() => server.stats().batches >= 2);
  executor.release();
  await waitFor(() => victim.answered() === VICTIM_BATCHES, { timeoutMs: 60_000 });
  const order = executor.batches.map((b) => b.initiator);
  const firstVictim = order.indexOf(VICTIM);
  const lastVictim = order.lastIndexOf(VICTIM);
  // Flooder batches executed while the victim's batches were being served.
  const flooderDuring = order.slice(firstVictim, lastVictim + 1).filter((i) => i === FLOODER).length;
  const flooderBefore = order.slice(0, firstVictim).filter((i) => i === FLOODER).length;
  return { flooderDuring, flooderBefore, peak: server.stats().inFlightPeak, flooderLeft: FLOOD - order.filter((i) => i === FLOODER).length };
}

describe('memory server under a flood from one peer', () => {
  it('serves another peer interleaved with the flood and never holds more than the bound per stream', async () => {
    const r = await flood(BOUND);
    expect(r.peak).toBeLessThanOrEqual(BOUND);
    // The victim's 20 batches are served within 2 bounds of the flooder's own batches...
    expect(r.flooderDuring).toBeLessThanOrEqual(VICTIM_BATCHES + 2 * BOUND);
    // ...and the victim did not have to wait for the flood to finish.
    expect(r.flooderLeft).toBeGreaterThan(0);
  });

  it('catches a server whose per-stream bound is effectively off (mutant)', async () => {
    const r = await flood(1_000_000);
    expect(r.peak).toBeGreaterThan(BOUND);
  });
});
