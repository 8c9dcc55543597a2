import type { Clock, LockId, Mailbox, Message, NodeId, SpanContextRef } from '@lockfabric/ports';
import { isDeclockMessage, parseGrant } from './messages.js';

export type WaitOutcome =
  | { readonly kind: 'grant'; readonly remoteTs: number | undefined; readonly trace: SpanContextRef | undefined }
  | { readonly kind: 'reset' }
  | { readonly kind: 'timeout' };

/** True when epoch `a` comes after `b` on a ring of 2^bits epochs. */
export function epochAfter(a: number, b: number, bits: number): boolean {
  const ring = 2 ** bits;
  const diff = (((a - b) % ring) + ring) % ring;
  return diff !== 0 && diff < ring / 2;
}

/** One waiter expecting a grant for (client, lock, epoch, position). */
export class PendingWait {
  readonly done: Promise<WaitOutcome>;
  private settle!: (outcome: WaitOutcome) => void;
  private settled = false;

  constructor(
    readonly key: string,
    readonly lock: LockId,
    readonly epoch: number,
    private readonly onSettled: (wait: PendingWait) => void,
  ) {
    this.done = new Promise((resolve) => (this.settle = resolve));
  }

  /** Resolves `timeout` at `deadlineNs` unless something else came first. */
  until(clock: Clock, deadlineNs: number): Promise<WaitOutcome> {
    // The timer is left to fire even when a grant came first (cheaper than cancelling it).
    if (!this.settled && Number.isFinite(deadlineNs)) void clock.sleep(Math.max(0, deadlineNs - clock.nowNs())).then(() => this.resolve({ kind: 'timeout' }));
    return this.done;
  }

  resolve(outcome: WaitOutcome): void {
    if (this.settled) return;
    this.settled = true;
    this.onSettled(this);
    this.settle(outcome);
  }
}

/**
 * What a compute node knows about grants and resets: the reset counter of each lock (the highest
 * epoch a RESET announced) and the waits of its clients. A RESET aborts every local wait of an
 * older epoch; a grant reaches only the wait of its exact (client, lock, epoch, position).
 */
export class CnSignals {
  /** Grants that matched no wait (late, or for an acquire that gave up); dropped. */
  staleGrants = 0;
  private readonly announced = new Map<LockId, number>();
  private readonly waits = new Map<string, PendingWait>();
  private readonly byLock = new Map<LockId, Set<PendingWait>>();

  constructor(
    readonly node: NodeId,
    readonly epochBits: number,
  ) {}

  /** "RESET seen": a reset of the epoch this operation runs in has been announced to this CN. */
  resetSeen(lock: LockId, epoch: number): boolean {
    const announced = this.announced.get(lock);
    return announced !== undefined && epochAfter(announced, epoch, this.epochBits);
  }

  /** Raises the lock's reset counter to `epoch` and aborts waits of older epochs. */
  announce(lock: LockId, epoch: number): void {
    const current = this.announced.get(lock);
    if (current !== undefined && !epochAfter(epoch, current, this.epochBits)) return;
    this.announced.set(lock, epoch);
    for (const wait of [...(this.byLock.get(lock) ?? [])]) {
      if (epochAfter(epoch, wait.epoch, this.epochBits)) wait.resolve({ kind: 'reset' });
    }
  }

  register(client: number, lock: LockId, epoch: number, pos: number): PendingWait {
    const key = waitKey(client, lock, epoch, pos);
    const wait = new PendingWait(key, lock, epoch, (settled) => this.forget(settled));
    this.waits.set(key, wait);
    let set = this.byLock.get(lock);
    if (!set) {
      set = new Set();
      this.byLock.set(lock, set);
    }
    set.add(wait);
    if (this.resetSeen(lock, epoch)) wait.resolve({ kind: 'reset' });
    return wait;
  }

  deliver(message: Message): void {
    if (message.kind === 'reset') {
      if (message.epoch !== undefined) this.announce(message.lock, Number(message.epoch));
      return;
    }
    const grant = parseGrant(message);
    const wait = grant ? this.waits.get(waitKey(message.to.client, grant.lock, grant.epoch, grant.pos)) : undefined;
    if (!grant || !wait) {
      this.staleGrants++;
      return;
    }
    wait.resolve({ kind: 'grant', remoteTs: grant.remoteTs, trace: grant.trace });
  }

  private forget(wait: PendingWait): void {
    this.waits.delete(wait.key);
    const set = this.byLock.get(wait.lock);
    set?.delete(wait);
    if (set && set.size === 0) this.byLock.delete(wait.lock);
  }
}

function waitKey(client: number, lock: LockId, epoch: number, pos: number): string {
  return `${client}|${lock}|${epoch}|${pos}`;
}

/**
 * Drains one client's mailbox into its node's signal board for the client's lifetime, so grants
 * for acquires that gave up and late RESETs never pile up in the bounded inbox.
 */
export class ClientInbox {
  private running = false;

  constructor(
    private readonly mailbox: Mailbox,
    private readonly signals: CnSignals,
  ) {}

  ensureRunning(): void {
    if (this.running) return;
    this.running = true;
    void this.pump();
  }

  private async pump(): Promise<void> {
    try {
      for (;;) {
        const message = await this.mailbox.receive(isDeclockMessage);
        if (!message) return;
        this.signals.deliver(message);
      }
    } catch {
      // the mailbox is gone (substrate shut down); the next wait restarts the pump
    } finally {
      this.running = false;
    }
  }
}
