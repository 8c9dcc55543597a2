#!/usr/bin/env node
// Processor time per verb of a memory server process, measured from outside: two server processes
// (the memory node's executor behind startMemoryServer, plaintext gRPC), `general` answering every
// frame through the generated message shapes (`mutantGeneralPath`, the code before session 20) and
// `direct` reading it straight into port work requests (libs/wire doorbell.ts), each sent the
// same 32-verb doorbells of a 64-client caslock run (CAS and WRITE on 1 000 lock words) over one
// Connect stream with `--window` frames in flight. Rounds alternate between the two; a server's utime+stime (/proc/<pid>/stat) over a round is divided by
// the verbs it answered, median of the rounds. A report, not a test: nothing is asserted.
// Usage: node tools/scripts/memory-node-cpu-per-verb.mjs [frames-per-round] [rounds] [--window N] [--traced]
// (--traced: every doorbell carries a trace context; the servers' Trace is the no-op one).
// Needs the live, wire, fabric and memory-node builds. SERVER_NODE_FLAGS="--cpu-prof ..." profiles the servers.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Client, credentials } from '@grpc/grpc-js';
import { MemoryService, encodeWorkRequestBatch, workRequestBatchToWire, workRequestToWire } from '@lockfabric/wire';

const VERBS = 32;
const LOCKS = 1000;

if (process.argv[2] === '--serve') {
  const { startMemoryServer, silentLogger } = await import('@lockfabric/live');
  const { RealClock } = await import('@lockfabric/realtime');
  const { MemoryNodeExecutor } = await import('../../apps/memory-node/dist/memory-executor.js');
  const mode = process.argv[3];
  const executor = new MemoryNodeExecutor({ node: 0, lockTableBytes: LOCKS * 8, lockCount: LOCKS, entryBytes: 8 }, new RealClock());
  const server = await startMemoryServer({ executor, host: '127.0.0.1', logger: silentLogger, mutantGeneralPath: mode === 'general' });
  process.stdout.write(`${server.address} ${executor.describe().regions[0].rkey}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => process.exit(0));
} else {
  const args = process.argv.slice(2);
  const windowAt = args.indexOf('--window');
  const WINDOW = windowAt >= 0 ? Number(args[windowAt + 1]) : 2;
  const TRACED = args.includes('--traced');
  const positional = (windowAt < 0 ? args : args.filter((_, i) => i !== windowAt && i !== windowAt + 1)).filter((a) => a !== '--traced');
  // A sampled span's context on every doorbell, as a compute node tracing at any ratio sends it.
  const span = TRACED ? { traceId: 'ab'.repeat(16), spanId: 'cd'.repeat(8), traceFlags: 1 } : undefined;
  const FRAMES = Number(positional[0] ?? 5_000);
  const ROUNDS = Number(positional[1] ?? 7);
  const self = fileURLToPath(import.meta.url);
  const cpuUs = (pid) => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 1e4; // clock ticks of 10 ms
  };

  async function startServer(mode) {
    const child = spawn(process.execPath, [...(process.env.SERVER_NODE_FLAGS ?? '').split(' ').filter(Boolean), self, '--serve', mode], { stdio: ['pipe', 'pipe', 'inherit'] });
    const line = await new Promise((resolve) => child.stdout.once('data', (d) => resolve(String(d).trim())));
    const [address, rkey] = line.split(' ');
    const client = new Client(address, credentials.createInsecure());
    const call = client.makeBidiStreamRequest(`/${MemoryService.typeName}/Connect`, (b) => Buffer.from(b.buffer, b.byteOffset, b.byteLength), (b) => b);
    const frames = [];
    for (let f = 0; f < 64; f++) {
      const wire = [];
      for (let i = 0; i < VERBS; i++) {
        const lock = (f * VERBS + i * 37) % LOCKS;
        const addr = { node: 0, region: 0, rkey: Number(rkey), offset: lock * 8 };
        const wr = i % 2 === 0 ? { op: 'cas', addr, compare: 0n, swap: BigInt(f + 1), lock } : { op: 'write', addr, data: new Uint8Array(8), lock };
        wire.push(workRequestToWire(wr, f * VERBS + i + 1));
      }
      frames.push(encodeWorkRequestBatch(workRequestBatchToWire(1, wire, span)));
    }
    call.on('error', () => {}); // the server going away at the end
    let onAnswer = () => {};
    call.on('data', () => onAnswer());
    const run = (count) =>
      new Promise((resolve) => {
        let sent = 0;
        let answered = 0;
        onAnswer = () => {
          answered++;
          if (answered === count) resolve();
          else if (sent < count) call.write(frames[sent++ % frames.length]);
        };
        for (; sent < Math.min(WINDOW, count); ) call.write(frames[sent++ % frames.length]);
      });
    return { mode, child, run, close: () => (call.end(), client.close(), child.stdin.end()) };
  }

  const MODES = ['general', 'direct'];
  const servers = [];
  for (const mode of MODES) servers.push(await startServer(mode));
  for (const s of servers) await s.run(2_000); // warm up
  const samples = Object.fromEntries(MODES.map((mode) => [mode, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const s of round % 2 === 0 ? servers : [...servers].reverse()) {
      const before = cpuUs(s.child.pid);
      await s.run(FRAMES);
      samples[s.mode].push((cpuUs(s.child.pid) - before) / (FRAMES * VERBS));
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`${FRAMES} frames of ${VERBS} verbs per round${TRACED ? ', traced' : ''}, window ${WINDOW}, ${ROUNDS} rounds interleaved, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  for (const mode of MODES) console.log(`${mode.padEnd(8)} memory server CPU µs per verb: median ${median(samples[mode]).toFixed(3)} (rounds ${samples[mode].map((x) => x.toFixed(3)).join(' ')})`);
  for (const s of servers) s.close();
}
