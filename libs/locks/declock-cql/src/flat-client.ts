import { AcquireDeadline, AcquireSpan, TruncatedBackoff } from '@lockfabric/locks-common';
import { InvariantError, clientKey } from '@lockfabric/ports';
import type { AcquireOptions, ClientPorts, Grant, LockClient, LockId, LockMode } from '@lockfabric/ports';
import { raceDeadline, recordGrantSpan } from '@lockfabric/lock-declock';
import type { CqlContext, CqlEngine, CqlHold, CqlOptions, CqlStats } from '@lockfabric/lock-declock';

export interface CqlGrant extends Grant {
  readonly hold: CqlHold;
}

/**
 * The flat CQL lock (paper §4): every client enqueues on the memory node itself. Task-fair:
 * grants follow the order in which acquire FAAs reached the header.
 *
 * A caller that gives up (timeout, abort) cannot take its entry back, so its place is kept by a
 * background continuation that takes the grant and releases it at once; the client starts no
 * second membership on that lock until then, so members per lock never exceed clients.
 */
export class FlatCqlClient implements LockClient<CqlGrant> {
  private readonly engine: CqlEngine;
  private readonly backoff: TruncatedBackoff;
  private readonly leftovers = new Map<LockId, Promise<void>>();

  constructor(
    private readonly ports: ClientPorts,
    options: CqlOptions,
    private readonly protocol: string,
    context: CqlContext,
  ) {
    this.engine = context.engine;
    this.backoff = new TruncatedBackoff(ports.random, { initialNs: options.retryBackoffInitialNs, maxNs: options.retryBackoffMaxNs, factor: 2 });
  }

  get stats(): CqlStats {
    return this.engine.stats;
  }

  async acquire(lock: LockId, mode: LockMode, options?: AcquireOptions): Promise<CqlGrant> {
    const { clock } = this.ports;
    const deadline = new AcquireDeadline(clock, lock, mode, options);
    const op = new AcquireSpan(this.ports.trace, clock, this.protocol, lock, mode, clientKey(this.ports.self));
    try {
      // A restarted memory node's locks are reset on this node before any new operation (§4.6).
      this.engine.followTables();
      deadline.check();
      const leftover = this.leftovers.get(lock);
      if (leftover) {
        const waited = await raceDeadline(leftover, clock, deadline, options?.signal);
        if (!waited.settled) throw waited.error;
      }
      const token = { abandoned: false };
      const work = this.acquireLoop(lock, mode, op, token);
      const raced = await raceDeadline(work, clock, deadline, options?.signal);
      if (raced.settled) {
        if (!raced.value) throw new InvariantError('declock-cql', 'an acquire ended without a grant');
        op.granted();
        return raced.value;
      }
      token.abandoned = true;
      const cleanup: Promise<void> = work
        .then((grant) => (grant ? this.release(grant) : undefined))
        .catch(() => undefined)
        .finally(() => {
          if (this.leftovers.get(lock) === cleanup) this.leftovers.delete(lock);
        });
      this.leftovers.set(lock, cleanup);
      throw raced.error;
    } catch (error) {
      op.failed(error);
      throw error;
    }
  }

  release(grant: CqlGrant): Promise<void> {
    return this.engine.release(grant.hold);
  }

  private async acquireLoop(lock: LockId, mode: LockMode, op: AcquireSpan, token: { abandoned: boolean }): Promise<CqlGrant | undefined> {
    this.backoff.reset();
    for (;;) {
      const attempt = await this.engine.acquire(lock, mode, 0, op);
      if (attempt.ok) {
        if (attempt.handover) {
          // The receiving side of the handover: a lock.grant child of the releaser's lock.handover.
          recordGrantSpan(this.ports.trace, attempt.handover, this.protocol, lock, mode, clientKey(this.ports.self));
          if (!token.abandoned) op.span.addLink(attempt.handover);
        }
        return { lock, mode, hold: attempt.hold };
      }
      // Aborted by a reset (§4.4): retry, after a pause if another client's reset is under way.
      op.retries++;
      if (token.abandoned) return undefined;
      if (attempt.backoff) await this.engine.waitForResetEnd(lock, op, () => this.backoff.nextDelayNs());
    }
  }
}
