import type { AcquireDeadline, AcquireSpan } from '@lockfabric/locks-common';
import type { ClientPorts, LockId, RemoteAddr } from '@lockfabric/ports';
import { classAccess } from './class-access.js';
import { NULL_REF, encodeRef, tailAddr } from './layout.js';
import type { AccessClass } from './layout.js';

/**
 * Mutant M0 (spec §4.4): the "obvious" asymmetric lock ALock exists to replace. One word; local
 * processes take it with a CPU CAS, remote ones with a NIC CAS. A CPU RMW is not atomic with a
 * NIC RMW (Table 1), so both can "win" the same free word. Kept so the simulator must show it.
 */
export class NaiveMixedCasLock {
  private readonly tag: bigint;

  constructor(
    private readonly ports: ClientPorts,
    private readonly pollNs: number,
  ) {
    this.tag = encodeRef({ node: ports.self.node, client: ports.self.client, index: 0 });
  }

  async acquire(entry: RemoteAddr, lock: LockId, cls: AccessClass, deadline: AcquireDeadline, op: AcquireSpan): Promise<void> {
    const access = classAccess(cls, this.ports.verbs, lock, op, false);
    const word = tailAddr(entry, 0);
    for (;;) {
      if ((await access.cas(word, NULL_REF, this.tag)) === NULL_REF) return;
      op.retries++;
      await deadline.pause(this.pollNs);
    }
  }

  async release(entry: RemoteAddr, lock: LockId, cls: AccessClass): Promise<void> {
    await classAccess(cls, this.ports.verbs, lock, { verbs: 0 }, false).store(tailAddr(entry, 0), NULL_REF);
  }
}
