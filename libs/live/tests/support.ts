// Test-only helpers. testkit is a dev dependency of live, imported only here (tests are not part
// of the build; eslint.config.mjs does not list `type:testkit` for `type:live` sources).
export { freePort, startNatsServer, waitFor, type NatsServerHandle } from '@lockfabric/testkit';
import type { Completion, NodeId, WorkRequest } from '@lockfabric/ports';
import type { Logger } from '../src/logger.js';
import type { ExecuteContext, MemoryExecutor } from '../src/memory-server.js';
import type { MemoryDescription } from '../src/memory-description.js';

/** A logger that keeps its lines, for asserting what was logged. */
export function memoryLogger(): Logger & { readonly lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    info: (message) => lines.push(`INFO ${message}`),
    warn: (message) => lines.push(`WARN ${message}`),
    error: (message) => lines.push(`ERROR ${message}`),
  };
}

/**
 * A tiny memory for exercising the transport: 8-byte words by offset, READ/WRITE of one word,
 * CAS and FAA. It records every batch it executes. `gate` (when set) makes executeBatch wait for
 * the test to open it, to hold batches in flight.
 */
export class FakeExecutor implements MemoryExecutor {
  readonly words = new Map<number, bigint>();
  readonly batches: { initiator: NodeId; requests: readonly WorkRequest[]; context?: ExecuteContext }[] = [];
  private gate: Promise<void> | undefined;
  private openGate: (() => void) | undefined;

  constructor(private readonly node: NodeId = 9) {}

  hold(): void {
    this.gate = new Promise((resolve) => (this.openGate = resolve));
  }

  release(): void {
    this.openGate?.();
    this.gate = undefined;
  }

  executeBatch(batch: readonly WorkRequest[], initiator: NodeId, context?: ExecuteContext): Completion[] | Promise<Completion[]> {
    const run = () => {
      this.batches.push({ initiator, requests: batch, ...(context ? { context } : {}) });
      return batch.map((wr) => this.execute(wr));
    };
    const gate = this.gate;
    return gate ? gate.then(run) : run();
  }

  describe(): MemoryDescription {
    return {
      node: this.node,
      regions: [{ region: 0, rkey: 77, sizeBytes: 1 << 20, name: 'locks' }],
      lockTables: [{ name: 'caslock', region: 0, baseOffset: 0, entryBytes: 8, lockCount: 1000 }],
    };
  }

  private execute(wr: WorkRequest): Completion {
    if (wr.addr.node !== this.node) return { status: 'unknown-node', detail: `node ${wr.addr.node} is not ${this.node}` };
    const old = this.words.get(wr.addr.offset) ?? 0n;
    switch (wr.op) {
      case 'read': {
        const data = new Uint8Array(8);
        new DataView(data.buffer).setBigUint64(0, old, true);
        return { status: 'ok', data: data.subarray(0, wr.length) };
      }
      case 'write':
        this.words.set(wr.addr.offset, new DataView(wr.data.buffer, wr.data.byteOffset).getBigUint64(0, true));
        return { status: 'ok' };
      case 'cas':
        if (old === wr.compare) this.words.set(wr.addr.offset, wr.swap);
        return { status: 'ok', value: old };
      case 'faa':
        this.words.set(wr.addr.offset, (old + wr.add) & 0xffff_ffff_ffff_ffffn);
        return { status: 'ok', value: old };
      default:
        return { status: 'unsupported', detail: `${wr.op} is not supported by the fake` };
    }
  }
}
