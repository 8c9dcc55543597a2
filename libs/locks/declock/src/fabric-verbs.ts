import { FabricAccessError } from '@lockfabric/ports';
import type { Completion, LockId, RemoteAddr, Verbs, WorkRequest } from '@lockfabric/ports';
import { entryToBytes, wordAt } from './entry.js';

/** The verbs of one lock operation, tagged with the lock for per-lock NIC counters. */
export class FabricVerbs {
  constructor(
    private readonly verbs: Verbs,
    private readonly lock: LockId,
  ) {}

  faa(addr: RemoteAddr, add: bigint): Promise<bigint> {
    return this.verbs.faa(addr, add, { lock: this.lock });
  }

  cas(addr: RemoteAddr, compare: bigint, swap: bigint): Promise<bigint> {
    return this.verbs.cas(addr, compare, swap, { lock: this.lock });
  }

  read(addr: RemoteAddr, length: number): Promise<Uint8Array> {
    return this.verbs.read(addr, length, { lock: this.lock });
  }

  async readWord(addr: RemoteAddr): Promise<bigint> {
    return wordAt(await this.read(addr, 8), 0);
  }

  write(addr: RemoteAddr, data: Uint8Array): Promise<void> {
    return this.verbs.write(addr, data, { lock: this.lock });
  }

  writeWord(addr: RemoteAddr, word: bigint): Promise<void> {
    return this.write(addr, entryToBytes(word));
  }

  /** FAA and READ in one doorbell batch: one round trip, two verbs. */
  async faaThenRead(faaAddr: RemoteAddr, add: bigint, readAddr: RemoteAddr, length: number): Promise<{ old: bigint; data: Uint8Array }> {
    const batch: WorkRequest[] = [
      { op: 'faa', addr: faaAddr, add, lock: this.lock },
      { op: 'read', addr: readAddr, length, lock: this.lock },
    ];
    const [faa, read] = await this.verbs.post(batch);
    const old = ok(faa).value;
    const data = ok(read).data;
    if (old === undefined || data === undefined) throw new FabricAccessError('bad-request', 'FAA+READ batch completed without its results');
    return { old, data };
  }
}

function ok(completion: Completion | undefined): Completion {
  if (!completion) throw new FabricAccessError('bad-request', 'missing completion in a FAA+READ batch');
  if (completion.status !== 'ok') throw new FabricAccessError(completion.status, completion.detail ?? 'verb failed');
  return completion;
}
