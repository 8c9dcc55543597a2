import { AcquireDeadline, AcquireSpan, LOCK_ATTR } from '@lockfabric/locks-common';
import { clientKey } from '@lockfabric/ports';
import type { AcquireOptions, ClientPorts, Grant, LockClient, LockId, LockMode, LockPacket } from '@lockfabric/ports';
import type { AgentPool } from './agent-pool.js';
import type { FissLockOptions } from './options.js';
import { agentPoolFor } from './registry.js';
import { FLAG_ABORT, FLAG_DUP, FLAG_REACHED, ackStatusOf, taskKey } from './wire.js';

export interface FissGrant extends Grant {
  readonly task: number;
}

type Outcome = { kind: 'granted'; packet: LockPacket } | { kind: 'timeout' } | { kind: 'aborted' };

/**
 * The FissLock client library (spec §4.2): local agent first (④⑤), else a sequenced ACQUIRE to
 * the decider (①②③); an attempt with no GRANT within T_ACQ is aborted with an ABORT RELEASE once
 * its ACQUIRE is acknowledged, and retried with a new request id (lost switch GRANT, §5.2).
 */
export class FissLockClient implements LockClient<FissGrant> {
  private readonly pool: AgentPool;
  private rid = 0;

  constructor(
    private readonly ports: ClientPorts,
    private readonly options: FissLockOptions,
  ) {
    this.pool = agentPoolFor(ports, options);
  }

  async acquire(lock: LockId, mode: LockMode, options?: AcquireOptions): Promise<FissGrant> {
    const deadline = new AcquireDeadline(this.ports.clock, lock, mode, options);
    const op = new AcquireSpan(this.ports.trace, this.ports.clock, 'fisslock', lock, mode, clientKey(this.ports.self));
    try {
      for (;;) {
        deadline.check();
        const task = taskKey(this.ports.self.client, ++this.rid);
        const grant = await this.attempt(lock, mode, task, deadline, op, options?.signal);
        if (grant) {
          op.granted();
          return grant;
        }
        op.retries++;
      }
    } catch (error) {
      op.failed(error);
      throw error;
    }
  }

  async release(grant: FissGrant): Promise<void> {
    const span = this.ports.trace.startSpan('lock.release', {
      attributes: { [LOCK_ATTR.protocol]: 'fisslock', [LOCK_ATTR.lock]: grant.lock, [LOCK_ATTR.mode]: grant.mode, [LOCK_ATTR.client]: clientKey(this.ports.self) },
    });
    // ⑥⑦⑧ through the local agent; otherwise ⑨ through the decider
    if (this.pool.tryLocalRelease(grant.lock, grant.task) !== 'done') {
      this.pool.link.send({ type: 'release', lock: grant.lock, machine: this.pool.machine, task: grant.task, mode: grant.mode, incarnation: 0, flags: 0 });
    }
    span.end();
    return Promise.resolve();
  }

  /** One request id's try: resolves the grant, or undefined when T_ACQ passed and the attempt was aborted. */
  private async attempt(lock: LockId, mode: LockMode, task: number, deadline: AcquireDeadline, op: AcquireSpan, signal?: AbortSignal): Promise<FissGrant | undefined> {
    const pool = this.pool;
    let resolveOutcome!: (o: Outcome) => void;
    const outcome = new Promise<Outcome>((resolve) => (resolveOutcome = resolve));
    let acquireSeq: number | undefined;
    let acked = false;
    let reached = false;
    pool.listeners.set(task, {
      granted: (packet) => {
        if (acquireSeq !== undefined) pool.link.acknowledge(acquireSeq, packet); // a GRANT is the ACQUIRE's ACK
        resolveOutcome({ kind: 'granted', packet });
      },
    });
    const local = pool.tryLocalAcquire(lock, task, mode);
    if (local === 'granted') {
      pool.listeners.delete(task);
      return { lock, mode, task };
    }
    let onAcked: (() => void) | undefined;
    if (local === 'queued') reached = true; // recorded in the local agent's queue
    if (local === 'no-agent') {
      op.verbs++;
      acquireSeq = pool.link.send({ type: 'acquire', lock, machine: pool.machine, task, mode, incarnation: 0, flags: 0 }, (ack) => {
        acked = true;
        const status = ack.type === 'ack' ? ackStatusOf(ack.flags) : 'accepted';
        if (status === 'accepted' || (status === 'bounced' && (ack.flags & FLAG_DUP) === 0)) reached = true;
        onAcked?.();
      });
    }
    const timer = new AbortController();
    const onAbort = (): void => timer.abort();
    signal?.addEventListener('abort', onAbort);
    const waitNs = Math.min(this.options.attemptTimeoutNs, deadline.remainingNs());
    this.ports.clock.sleep(Math.max(0, waitNs), timer.signal).then(
      () => resolveOutcome({ kind: 'timeout' }),
      () => resolveOutcome({ kind: signal?.aborted ? 'aborted' : 'timeout' }),
    );
    const result = await outcome;
    timer.abort();
    signal?.removeEventListener('abort', onAbort);
    if (result.kind === 'granted') {
      pool.listeners.delete(task);
      return { lock, mode, task };
    }
    // give up on this request id: a late GRANT is taken silently and released by the abort path
    pool.listeners.set(task, { granted: () => undefined });
    if (local === 'queued' && pool.abortLocal(lock, task)) {
      pool.listeners.delete(task);
    } else {
      const abortRelease = (): void => {
        pool.link.send(
          { type: 'release', lock, machine: pool.machine, task, mode, incarnation: 0, flags: FLAG_ABORT | (reached ? FLAG_REACHED : 0) },
          (ack) => {
            if (ack.type === 'ack' && ackStatusOf(ack.flags) === 'freed') pool.discardedTasks.add(task);
            pool.listeners.delete(task);
          },
        );
      };
      // the abort RELEASE is sent only after the ACQUIRE was acknowledged, so it cannot overtake it
      if (acquireSeq === undefined || acked) abortRelease();
      else onAcked = abortRelease;
    }
    deadline.check();
    return undefined;
  }
}
