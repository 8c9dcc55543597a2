import type { ProtocolDefinition } from '@lockfabric/locks-common';
import type { ClientPorts, LocalMemory, RemoteAddr, Verbs, WorkRequest } from '@lockfabric/ports';
import { ENTRY_BYTES, TAIL_OFFSET_BYTES, VICTIM_OFFSET_BYTES, createAlockClient } from '../../src/index.js';

/**
 * Access-class audit (spec E8/I8): for every word a protocol touches, which kinds of access each
 * side made — `cpu` (a process on the word's node) or `nic` (a verb) × read, write or rmw.
 * Lock-table words are named by role; everything else counts as descriptor memory.
 */
export type Side = 'cpu' | 'nic';
export type AccessKind = 'read' | 'write' | 'rmw';
export type WordRole = 'T_L' | 'T_R' | 'victim' | 'descriptor';

export class AccessAudit {
  /** role → set of `${side}:${kind}` seen on any word of that role. */
  readonly byRole = new Map<WordRole, Set<string>>();
  /** word key → set of `${side}:${kind}`. */
  readonly byWord = new Map<string, Set<string>>();
  /** Verbs issued by clients located on a memory node, per target node. */
  readonly verbsFromMemoryNodes = new Map<number, number>();

  constructor(private readonly isMemoryNode: (node: number) => boolean) {}

  record(side: Side, kind: AccessKind, addr: RemoteAddr, words = 1): void {
    for (let i = 0; i < words; i++) {
      const offset = addr.offset + 8 * i;
      const role = this.roleOf(addr, offset);
      const key = `${addr.node}/${addr.region}/${offset}`;
      const tag = `${side}:${kind}`;
      if (!this.byRole.has(role)) this.byRole.set(role, new Set());
      this.byRole.get(role)!.add(tag);
      if (!this.byWord.has(key)) this.byWord.set(key, new Set());
      this.byWord.get(key)!.add(tag);
    }
  }

  /** Words that saw a CPU write or RMW and also a NIC RMW: Table 1's non-atomic pairs. */
  unsafeWords(): string[] {
    return [...this.byWord].filter(([, tags]) => (tags.has('cpu:write') || tags.has('cpu:rmw')) && tags.has('nic:rmw')).map(([key]) => key);
  }

  private roleOf(addr: RemoteAddr, offset: number): WordRole {
    if (!this.isMemoryNode(addr.node) || addr.region !== 0) return 'descriptor';
    const inEntry = offset % ENTRY_BYTES;
    if (inEntry === TAIL_OFFSET_BYTES[0]) return 'T_L';
    if (inEntry === TAIL_OFFSET_BYTES[1]) return 'T_R';
    if (inEntry === VICTIM_OFFSET_BYTES) return 'victim';
    return 'descriptor';
  }
}

function kindOf(wr: WorkRequest): AccessKind {
  return wr.op === 'read' ? 'read' : wr.op === 'write' ? 'write' : 'rmw';
}

function wordsOf(wr: WorkRequest): number {
  if (wr.op === 'read') return Math.ceil(wr.length / 8);
  if (wr.op === 'write') return Math.ceil(wr.data.length / 8);
  return 1;
}

/** `ports` with every verb and CPU access recorded in `audit`. */
export function auditedPorts(ports: ClientPorts, audit: AccessAudit, isMemoryNode: (node: number) => boolean): ClientPorts {
  const inner = ports.verbs;
  const nic = (wr: WorkRequest) => {
    audit.record('nic', kindOf(wr), wr.addr, wordsOf(wr));
    if (isMemoryNode(ports.self.node)) audit.verbsFromMemoryNodes.set(wr.addr.node, (audit.verbsFromMemoryNodes.get(wr.addr.node) ?? 0) + 1);
  };
  const cpu: LocalMemory = {
    load: (addr) => (audit.record('cpu', 'read', addr), inner.cpu.load(addr)),
    store: (addr, value) => (audit.record('cpu', 'write', addr), inner.cpu.store(addr, value)),
    cas: (addr, compare, swap) => (audit.record('cpu', 'rmw', addr), inner.cpu.cas(addr, compare, swap)),
    faa: (addr, add) => (audit.record('cpu', 'rmw', addr), inner.cpu.faa(addr, add)),
    // A wait is no access of its own: the loop loads the word again when it returns.
    waitWhile: (addr, value, signal) => inner.cpu.waitWhile(addr, value, signal),
  };
  const verbs: Verbs = {
    post: (batch, options) => (batch.forEach(nic), inner.post(batch, options)),
    read: (addr, length, options) => (nic({ op: 'read', addr, length }), inner.read(addr, length, options)),
    write: (addr, data, options) => (nic({ op: 'write', addr, data }), inner.write(addr, data, options)),
    cas: (addr, compare, swap, options) => (nic({ op: 'cas', addr, compare, swap }), inner.cas(addr, compare, swap, options)),
    faa: (addr, add, options) => (nic({ op: 'faa', addr, add }), inner.faa(addr, add, options)),
    maskedCas: (addr, width, compare, swap, compareMask, swapMask, options) => (
      nic({ op: 'masked-cas', addr, width, compare, swap, compareMask, swapMask }),
      inner.maskedCas(addr, width, compare, swap, compareMask, swapMask, options)
    ),
    maskedFaa: (addr, width, add, boundaryMask, options) => (
      nic({ op: 'masked-faa', addr, width, add, boundaryMask }),
      inner.maskedFaa(addr, width, add, boundaryMask, options)
    ),
    isLocal: (addr) => inner.isLocal(addr),
    cpu,
  };
  return { ...ports, verbs };
}

/** ALock whose clients' memory accesses all go through the audit. */
export function auditedAlock(base: ProtocolDefinition, audit: AccessAudit, isMemoryNode: (node: number) => boolean): ProtocolDefinition {
  return { ...base, createClient: (ports, options) => createAlockClient(auditedPorts(ports, audit, isMemoryNode), options) };
}
