#!/usr/bin/env node
// Processor time and object counts of an uncontended acquire+release over the live verb path, one
// process: a real MemoryService (gRPC on loopback, plaintext) with the memory node's executor, a
// MemoryQueuePair, QueuePairVerbs and a MailboxHub, driven by each protocol's client. CPU per
// operation comes from process.cpuUsage() (client and server together: they share the process),
// the median of interleaved rounds, so the machine's other load skews it less than wall time or a
// cluster run's totals would. Counts (async_hooks: promises, timers, immediates; gRPC doorbells)
// are exact. A report, not a test: nothing is asserted.
// Usage: node tools/scripts/live-verb-path-cpu.mjs [ops-per-round] [rounds] [id,...] [--no-counts]
//          [--trace-ratio R [--eager-unsampled]]
// where an id is a protocol or verbs:cas / verbs:masked (the bare verbs of caslock and ShiftLock).
// --trace-ratio traces both sides with the in-memory pipeline (the services' sampler and tail rule,
// spans kept in memory) at head ratio R; --eager-unsampled is its mutantEagerUnsampled (every
// unsampled lock span a full SDK span, as before decision 0021).
// Needs `npx nx run-many -t build`. docs/performance-live.md (session 18) has figures.
import { createHook } from 'node:async_hooks';
import { QueuePairVerbs, FixedDescriptorDirectory } from '@lockfabric/fabric';
import { MailboxHub, MemoryQueuePair, createSubjects, silentLogger, startMemoryServer } from '@lockfabric/live';
import { protocolById } from '@lockfabric/lock-catalog';
import { noopTrace } from '@lockfabric/ports';
import { RealClock } from '@lockfabric/realtime';
import { SeededRandom } from '@lockfabric/sim';
import { MemoryNodeExecutor } from '../../apps/memory-node/dist/memory-executor.js';

const OPS = Number(process.argv[2] ?? 20_000);
const ROUNDS = Number(process.argv[3] ?? 7);
const PROTOCOLS = (process.argv[4] ?? 'caslock,shiftlock').split(',');
// async_hooks slow every promise down: leave them out of a CPU profile (`--no-counts`).
const COUNTS = !process.argv.includes('--no-counts');
const LOCKS = 1000;
const MEMORY_NODE = 0;
const COMPUTE_NODE = 1;

const ratioAt = process.argv.indexOf('--trace-ratio');
const TRACE_RATIO = ratioAt > 0 ? Number(process.argv[ratioAt + 1]) : undefined;
const telemetryOf = async (serviceName) => {
  if (TRACE_RATIO === undefined) return undefined;
  const { createInMemoryTelemetry } = await import('@lockfabric/telemetry');
  return createInMemoryTelemetry({ serviceName, ratio: TRACE_RATIO, slowMs: 10, mutantEagerUnsampled: process.argv.includes('--eager-unsampled') });
};
const computeTelemetry = await telemetryOf('compute-node');
const memoryTelemetry = await telemetryOf('memory-node');

const clock = new RealClock();
const executor = new MemoryNodeExecutor({ node: MEMORY_NODE, lockTableBytes: PROTOCOLS.length * LOCKS * 16, lockCount: PROTOCOLS.length * LOCKS, entryBytes: 16 }, clock, memoryTelemetry?.trace);
const server = await startMemoryServer({ executor, logger: silentLogger });
const qp = await MemoryQueuePair.connect(server.address, COMPUTE_NODE, { logger: silentLogger });
const description = await qp.describe();
const lockRegion = description.regions.find((r) => r.region === 0);
// A single client sends no message: what runs of the hub is its receive. Publishes are counted.
let published = 0;
const nc = { subscribe: () => ({ unsubscribe() {} }), publish: () => void published++ };
const hub = new MailboxHub({ nc, subjects: createSubjects('cpu'), node: COMPUTE_NODE, logger: silentLogger });

// Each protocol gets its own part of the table: their entries differ in size and meaning.
function client(id, index) {
  if (id.startsWith('verbs:')) return bareVerbs(id, index);
  const definition = protocolById(id);
  const self = { node: COMPUTE_NODE, client: 0 };
  const ports = {
    self,
    verbs: new QueuePairVerbs({ localNode: COMPUTE_NODE, post: (batch, options) => qp.post(batch, options) }),
    mailbox: hub.mailbox(0),
    clock,
    random: new SeededRandom(1),
    trace: computeTelemetry?.trace ?? noopTrace,
    locks: { memoryNodes: [{ node: MEMORY_NODE, region: 0, rkey: lockRegion.rkey, baseOffset: index * LOCKS * 16 }], entryBytes: definition.entryBytes, lockCount: LOCKS },
    descriptors: new FixedDescriptorDirectory(self, (node) => node === MEMORY_NODE),
  };
  return definition.createClient(ports, definition.liveDefaults);
}

/**
 * The two verbs of each protocol's uncontended cycle with no protocol code around them: `verbs:cas`
 * is caslock's CAS + WRITE of 8 bytes, `verbs:masked` ShiftLock's two 16-byte masked CAS.
 */
function bareVerbs(id, index) {
  const verbs = new QueuePairVerbs({ localNode: COMPUTE_NODE, post: (batch, options) => qp.post(batch, options) });
  const entry = (lock) => ({ node: MEMORY_NODE, region: 0, rkey: lockRegion.rkey, offset: index * LOCKS * 16 + lock * 16 });
  const TAIL = ((1n << 40n) - 1n) << 24n;
  const me = 1n << 24n;
  if (id === 'verbs:cas') {
    return {
      acquire: async (lock) => ({ lock, old: await verbs.cas(entry(lock), 0n, 7n, { lock }) }),
      release: async ({ lock }) => verbs.write(entry(lock), new Uint8Array(8), { lock }),
    };
  }
  return {
    acquire: async (lock) => ({ lock, old: await verbs.maskedCas(entry(lock), 16, 0n, me, 0n, TAIL, { lock }) }),
    release: async ({ lock }) => verbs.maskedCas(entry(lock), 16, me, 1n << 64n, TAIL, TAIL | (1n << 64n), { lock }),
  };
}

const counts = new Map();
const hook = createHook({ init: (_id, type) => counts.set(type, (counts.get(type) ?? 0) + 1) });

async function round(lockClient, ops, counting) {
  counts.clear();
  if (counting) hook.enable();
  const doorbells = qp.stats().doorbells;
  const publishedBefore = published;
  const start = process.cpuUsage();
  for (let i = 0; i < ops; i++) {
    const grant = await lockClient.acquire(i % LOCKS, 'exclusive');
    await lockClient.release(grant);
  }
  const used = process.cpuUsage(start);
  hook.disable();
  computeTelemetry?.reset();
  memoryTelemetry?.reset();
  return { us: (used.user + used.system) / ops, doorbells: (qp.stats().doorbells - doorbells) / ops, published: (published - publishedBefore) / ops, counts: Object.fromEntries([...counts].map(([k, v]) => [k, v / ops])) };
}

const clients = Object.fromEntries(PROTOCOLS.map((id, index) => [id, client(id, index)]));
for (const id of PROTOCOLS) await round(clients[id], 2_000, false); // warm up
const samples = Object.fromEntries(PROTOCOLS.map((id) => [id, []]));
for (let r = 0; r < ROUNDS; r++) for (const id of PROTOCOLS) samples[id].push((await round(clients[id], OPS, false)).us);
console.log(`node ${process.version}, ${OPS} acquire+release per round, ${ROUNDS} rounds interleaved, tracing ${TRACE_RATIO === undefined ? 'off' : `at ratio ${TRACE_RATIO}${process.argv.includes('--eager-unsampled') ? ' (eager unsampled)' : ''}`}, load ${(await import('node:os')).loadavg().map((l) => l.toFixed(2)).join(' ')}`);
for (const id of PROTOCOLS) {
  const sorted = [...samples[id]].sort((a, b) => a - b);
  const counted = COUNTS ? await round(clients[id], 2_000, true) : { doorbells: '-', published: '-', counts: '-' };
  console.log(`${id.padEnd(10)} CPU µs/op median ${sorted[Math.floor(ROUNDS / 2)].toFixed(1)} (min ${sorted[0].toFixed(1)}, max ${sorted.at(-1).toFixed(1)}); doorbells/op ${counted.doorbells}; NATS publishes/op ${counted.published}; per op ${JSON.stringify(counted.counts)}`);
}
qp.close();
await server.close({ graceMs: 100 });
