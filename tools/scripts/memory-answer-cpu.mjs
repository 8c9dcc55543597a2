#!/usr/bin/env node
// Processor time per verb of the memory node's answer to a doorbell, one process, no gRPC: decode a
// WorkRequestBatch frame, execute it on the memory node's executor (the NIC), encode the
// CompletionBatch. The doorbells are a 64-client caslock run's (32 verbs each, CAS and WRITE on
// 1 000 lock words); the general path (DoorbellAnswerer's mutantGeneralPath, the code before
// session 20) and the direct one run interleaved, median of the rounds. A report, not a test.
// Usage: node tools/scripts/memory-answer-cpu.mjs [frames-per-round] [rounds]
// Needs the live, wire, fabric and memory-node builds.
import { DoorbellAnswerer, silentLogger, MalformedInputCounter } from '@lockfabric/live';
import { encodeWorkRequestBatch, workRequestBatchToWire, workRequestToWire } from '@lockfabric/wire';
import { RealClock } from '@lockfabric/realtime';
import { MemoryNodeExecutor } from '../../apps/memory-node/dist/memory-executor.js';

const FRAMES = Number(process.argv[2] ?? 20_000);
const ROUNDS = Number(process.argv[3] ?? 9);
const LOCKS = 1000;
const VERBS = 32;
const executor = new MemoryNodeExecutor({ node: 0, lockTableBytes: LOCKS * 8, lockCount: LOCKS, entryBytes: 8 }, new RealClock());
const rkey = executor.describe().regions[0].rkey;

// Frames like a compute node's: half CAS (acquire: 0 -> owner), half WRITE (release: 0).
const frames = [];
for (let f = 0; f < 64; f++) {
  const wire = [];
  for (let i = 0; i < VERBS; i++) {
    const lock = (f * VERBS + i * 37) % LOCKS;
    const addr = { node: 0, region: 0, rkey, offset: lock * 8 };
    const wr = i % 2 === 0 ? { op: 'cas', addr, compare: 0n, swap: BigInt(f + 1), lock } : { op: 'write', addr, data: new Uint8Array(8), lock };
    wire.push(workRequestToWire(wr, f * VERBS + i + 1));
  }
  frames.push(encodeWorkRequestBatch(workRequestBatchToWire(1, wire, undefined)));
}

function answerer(general) {
  const counters = { batches: 0, requests: 0, malformedFrames: 0, malformedRequests: 0, executorErrors: 0 };
  return new DoorbellAnswerer({ executor, counters, malformed: new MalformedInputCounter({ logger: silentLogger }), logger: silentLogger, source: 'bench', mutantGeneralPath: general });
}
const builds = { general: answerer(true), direct: answerer(false) };
const results = { general: [], direct: [] };
let sink = 0;
for (let round = 0; round < ROUNDS + 1; round++) {
  for (const name of round % 2 === 0 ? ['general', 'direct'] : ['direct', 'general']) {
    const a = builds[name];
    const start = process.cpuUsage();
    for (let i = 0; i < FRAMES; i++) sink += a.answer(frames[i % frames.length], 'peer').length;
    const used = process.cpuUsage(start);
    if (round > 0) results[name].push(((used.user + used.system) * 1000) / (FRAMES * VERBS)); // ns per verb; round 0 warms up
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const name of ['general', 'direct']) console.log(`${name}: ${median(results[name]).toFixed(0)} ns CPU per verb (rounds: ${results[name].map((x) => x.toFixed(0)).join(' ')})`);
if (sink === 0) console.log('');
