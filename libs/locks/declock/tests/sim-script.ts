import type { ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import { lockAddress } from '@lockfabric/ports';
import type { LockId, Span, SpanContextRef, Trace } from '@lockfabric/ports';
import { createSimCluster } from '@lockfabric/sim';
import { HeaderLayout, decodeEntry } from '../src/index.js';
import type { HeaderFields, QueueEntry } from '../src/index.js';

export interface RecordedSpan {
  readonly name: string;
  readonly attributes: Record<string, string | number | boolean>;
  readonly context: SpanContextRef;
  readonly links: SpanContextRef[];
  readonly parent: SpanContextRef | undefined;
}

/** A Trace that keeps every ended span, with links, for assertions. */
export function recordingTrace(): { trace: Trace; spans: RecordedSpan[] } {
  const spans: RecordedSpan[] = [];
  let next = 0;
  const trace: Trace = {
    startSpan(name, options) {
      const recorded: RecordedSpan = {
        name,
        attributes: { ...(options?.attributes ?? {}) },
        context: { traceId: 'trace', spanId: `span-${++next}`, traceFlags: 1 },
        links: [...(options?.links ?? [])],
        parent: options?.parent,
      };
      const span: Span = {
        context: recorded.context,
        setAttribute: (key, value) => void (recorded.attributes[key] = value),
        addLink: (context) => void recorded.links.push(context),
        recordError: () => undefined,
        end: () => void spans.push(recorded),
      };
      return span;
    },
  };
  return { trace, spans };
}

/**
 * A small sim cluster (no jitter) for scripted scenarios: one memory node, `computeNodes` compute
 * nodes, and helpers to read the lock state and count memory-node verbs and messages.
 */
export function scriptedCluster(protocol: ProtocolDefinition, options: { computeNodes?: number; lockCount?: number; capacity?: number; seed?: number } = {}) {
  const recorder = recordingTrace();
  const { cluster, scheduler } = createSimCluster({
    seed: options.seed ?? 1,
    lockCount: options.lockCount ?? 4,
    entryBytes: protocol.entryBytes,
    computeNodes: options.computeNodes ?? 2,
    jitterNs: 0,
    trace: recorder.trace,
  });
  const memory = cluster.node(cluster.memoryNodeIds[0]!);
  const header = new HeaderLayout(options.capacity ?? 8);
  const client = (cn: number, id: number, protocolOptions?: ProtocolOptions) =>
    protocol.createClient(cluster.clientPorts({ node: cluster.computeNodeIds[cn]!, client: id }), { capacity: header.capacity, ...protocolOptions });
  const word = (lock: LockId, offset = 0) => memory.memory.cpuLoad({ ...lockAddress(cluster.layout, lock), offset: lockAddress(cluster.layout, lock).offset + offset });
  return {
    cluster,
    scheduler,
    header,
    spans: recorder.spans,
    client,
    /** Memory-node verbs by opcode (non-zero only). */
    verbs(): Record<string, number> {
      return Object.fromEntries(Object.entries(memory.nic.counters.snapshot().byOpcode).filter(([, n]) => n !== 0));
    },
    doorbells: () => memory.nic.counters.snapshot().doorbells,
    messages: () => cluster.mailboxes.delivered,
    headerOf: (lock: LockId): HeaderFields => header.decode(word(lock)),
    entryOf: (lock: LockId, slot: number): QueueEntry => decodeEntry(word(lock, 8 + slot * 8)),
    rawEntry: (lock: LockId, slot: number) => word(lock, 8 + slot * 8),
    word,
    setHeader: (lock: LockId, fields: HeaderFields) => memory.memory.cpuStore(lockAddress(cluster.layout, lock), header.encode(fields)),
    sleep: (ns: number) => cluster.clock.sleep(ns),
    /** Runs `script` to completion under the virtual scheduler. */
    async run<T>(script: () => Promise<T>): Promise<T> {
      const done = script();
      await scheduler.run();
      return done;
    },
  };
}

/** Per-opcode difference of two verb snapshots. */
export function delta(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(after)
      .map(([op, n]) => [op, n - (before[op] ?? 0)] as const)
      .filter(([, n]) => n !== 0),
  );
}
