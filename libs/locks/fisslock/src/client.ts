import { AcquireDeadline, AcquireSpan, LOCK_ATTR, recordHandoverGrant } from '@lockfabric/locks-common';
import type { DeadlineOptions } from '@lockfabric/locks-common';
import { Stopper, clientKey } from '@lockfabric/ports';
import type { ClientPorts, Clock, Grant, LockClient, LockId, LockMode, LockPacket, SpanContextRef, StopSignal } from '@lockfabric/ports';
import type { ServerLockClient } from '@lockfabric/lock-srvlock';
import type { AgentPool } from './agent-pool.js';
import { fallbackClient, fallbackOptions, switchCapacityOf } from './fallback.js';
import type { FallbackGrant } from './fallback.js';
import type { FissLockOptions } from './options.js';
import type { SequencedLink } from './rack-links.js';
import { agentPoolFor } from './registry.js';
import { FLAG_ABORT, FLAG_DUP, FLAG_GRANTED, FLAG_HAS_AGENT, FLAG_REACHED, ackStatusOf, taskKey } from './wire.js';

export interface FissGrant extends Grant {
  readonly task: number;
  /** Granted by the switch at once as shared (②): the agent learns of it from the switch's copy, so the RELEASE says so (§13.4). */
  readonly switchShared?: boolean;
  /** Of a ② grant: the grant's home as the switch named it (agent machine + 1; 0 = unknown), echoed in the RELEASE. */
  readonly grantHome?: number;
  /** This hold's acquire span: the `lock.handover` span of its release links to it. */
  readonly acquireSpan?: SpanContextRef;
  /** Set when the lock is beyond the switch's capacity and a fallback manager granted it (§6.6). */
  readonly fallback?: FallbackGrant;
  /** With lockIds=mapped: the register index the packets used (`lock` is the application id). */
  readonly lid?: LockId;
}

type Outcome = { kind: 'granted'; packet: LockPacket } | { kind: 'timeout' } | { kind: 'aborted' };

/** Why an attempt's T_ACQ timer is stopped. Given as the reason, it spares a DOMException (and its stack) per acquire. */
const ATTEMPT_SETTLED = new Error('fisslock attempt settled');

/**
 * The T_ACQ timers of one acquire, on one Stopper: an attempt that timed out has no timer left to
 * stop, so only the attempt that ends the acquire (granted, or the caller's abort) stops one. Made
 * at the first timed wait, so a grant by the local agent needs no stopper at all.
 */
class AttemptTimers {
  private controller: Stopper | undefined;
  private forward: (() => void) | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly signal: StopSignal | undefined,
  ) {}

  /** Resolves after `ns`; rejects once the caller's signal aborts or `end` is called. */
  sleep(ns: number): Promise<void> {
    if (this.controller === undefined) {
      const controller = new Stopper();
      this.controller = controller;
      if (this.signal !== undefined) {
        this.forward = () => controller.stop(ATTEMPT_SETTLED);
        this.signal.addEventListener('abort', this.forward);
      }
    }
    return this.clock.sleep(ns, this.controller);
  }

  /** Stops the pending timer, if any, and lets go of the caller's signal. */
  end(): void {
    this.controller?.stop(ATTEMPT_SETTLED);
    if (this.forward !== undefined) this.signal?.removeEventListener('abort', this.forward);
  }
}

/**
 * The FissLock client library (spec §4.2): local agent first (④⑤), else a sequenced ACQUIRE to
 * the decider (①②③); an attempt with no GRANT within T_ACQ is aborted with an ABORT RELEASE once
 * its ACQUIRE is acknowledged, and retried with a new request id (lost switch GRANT, §5.2).
 */
export class FissLockClient implements LockClient<FissGrant> {
  private readonly pool: AgentPool;
  private rid = 0;
  private readonly capacity: number;
  private fallback: ServerLockClient | undefined;

  constructor(
    private readonly ports: ClientPorts,
    private readonly options: FissLockOptions,
  ) {
    this.pool = agentPoolFor(ports, options);
    this.capacity = switchCapacityOf(ports, options.switchCapacity);
  }

  /** `options` as `AcquireOptions`, but its signal may be a Stopper's (RecoverableFissLockClient's). */
  async acquire(lock: LockId, mode: LockMode, options?: DeadlineOptions): Promise<FissGrant> {
    if (lock >= this.capacity) {
      const bridged = fallbackOptions(options);
      try {
        const fallback = await this.fallbackClient().acquire(lock, mode, bridged.options);
        return { lock, mode, task: 0, fallback };
      } finally {
        bridged.end();
      }
    }
    const deadline = new AcquireDeadline(this.ports.clock, lock, mode, options);
    const op = new AcquireSpan(this.ports.trace, this.ports.clock, 'fisslock', lock, mode, clientKey(this.ports.self));
    const timers = new AttemptTimers(this.ports.clock, options?.signal);
    try {
      for (;;) {
        deadline.check();
        const task = taskKey(this.ports.self.client, ++this.rid);
        const grant = await this.attempt(lock, mode, task, deadline, op, timers, options?.signal);
        if (grant) {
          op.granted();
          return grant;
        }
        op.retries++;
      }
    } catch (error) {
      op.failed(error);
      throw error;
    } finally {
      timers.end();
    }
  }

  async release(grant: FissGrant): Promise<void> {
    if (grant.fallback) return this.fallbackClient().release(grant.fallback);
    const span = this.ports.trace.startSpan('lock.release', {
      attributes: { [LOCK_ATTR.protocol]: 'fisslock', [LOCK_ATTR.lock]: grant.lock, [LOCK_ATTR.mode]: grant.mode, [LOCK_ATTR.client]: clientKey(this.ports.self) },
    });
    // ⑥⑦⑧ through the local agent; otherwise ⑨ through the decider
    if (this.pool.tryLocalRelease(grant.lock, grant.task, grant.acquireSpan, grant.switchShared === true) !== 'done') {
      const trace = grant.acquireSpan ? { trace: grant.acquireSpan } : {};
      this.pool.link.send({ type: 'release', lock: grant.lock, machine: this.pool.machine, task: grant.task, mode: grant.mode, incarnation: grant.grantHome ?? 0, flags: grant.switchShared ? FLAG_GRANTED : 0, ...trace });
    }
    span.end();
    return Promise.resolve();
  }

  /** Out-of-range locks are served by the lock's home manager; made on first use (it subscribes to the link). */
  private fallbackClient(): ServerLockClient {
    this.fallback ??= fallbackClient(this.ports, this.capacity);
    return this.fallback;
  }

  /** One request id's try: resolves the grant, or undefined when T_ACQ passed and the attempt was aborted. */
  private async attempt(lock: LockId, mode: LockMode, task: number, deadline: AcquireDeadline, op: AcquireSpan, timers: AttemptTimers, signal?: StopSignal): Promise<FissGrant | undefined> {
    const pool = this.pool;
    let resolveOutcome!: (o: Outcome) => void;
    const outcome = new Promise<Outcome>((resolve) => (resolveOutcome = resolve));
    let acquireSeq: number | undefined;
    // A seq means something only on the link that numbered it. Recovery (S2) replaces the pool's
    // link and the new one numbers from 1 again; a GRANT for this request arriving after S2 (it was
    // queued or woken by the repair) must not acknowledge the new link's packet of the same number
    // (recovery README: "Pre-recovery sequence numbers are void").
    let acquireLink: SequencedLink | undefined;
    let acked = false;
    let reached = false;
    pool.listen(task, {
      lock,
      granted: (packet) => {
        if (acquireSeq !== undefined) acquireLink?.acknowledge(acquireSeq, packet); // a GRANT is the ACQUIRE's ACK
        resolveOutcome({ kind: 'granted', packet });
      },
    });
    const local = pool.tryLocalAcquire(lock, task, mode);
    const acquireSpan = op.span.context ? { acquireSpan: op.span.context } : {};
    if (local === 'granted') {
      pool.endTask(task);
      return { lock, mode, task, ...acquireSpan };
    }
    let onAcked: (() => void) | undefined;
    if (local === 'queued') reached = true; // recorded in the local agent's queue
    if (local === 'no-agent') {
      op.verbs++;
      acquireLink = pool.link;
      acquireSeq = acquireLink.send({ type: 'acquire', lock, machine: pool.machine, task, mode, incarnation: 0, flags: 0 }, (ack) => {
        acked = true;
        const status = ack.type === 'ack' ? ackStatusOf(ack.flags) : 'accepted';
        // DUPLICATE counts as reached (§13.2): an agent says so of a request it already recorded
        // (a duplicated copy's answer can overtake the first copy's ACCEPTED). An unREACHED abort
        // would take the switch's timeout-free and free a lock just transferred to this very
        // request (wide sweep, 10% faults, seed 81). The switch's own DUPLICATE (a DUP ACQUIRE on
        // a free lock) only costs the abort a trip to the agent, which reissueAbort ends.
        if (status === 'accepted' || status === 'duplicate' || (status === 'bounced' && (ack.flags & FLAG_DUP) === 0)) reached = true;
        pool.noteRecorded(task, ack);
        onAcked?.();
      });
    }
    const waitNs = Math.min(this.options.attemptTimeoutNs, deadline.remainingNs());
    // a GRANT leaves this timer running until acquire() returns and ends it (one controller per acquire)
    timers.sleep(Math.max(0, waitNs)).then(
      () => resolveOutcome({ kind: 'timeout' }),
      () => resolveOutcome({ kind: signal?.aborted ? 'aborted' : 'timeout' }),
    );
    const result = await outcome;
    if (result.kind === 'granted') {
      pool.endTask(task);
      const p = result.packet;
      if (p.trace && p.agent !== undefined) {
        // granted by an agent transfer (⑧) or as its shared follower: the handover span came in the GRANT
        op.span.addLink(p.trace, { 'lockfabric.link.role': 'previous-holder' });
        recordHandoverGrant(this.ports.trace, p.trace, { [LOCK_ATTR.protocol]: 'fisslock', [LOCK_ATTR.lock]: lock, [LOCK_ATTR.client]: clientKey(this.ports.self) });
      }
      const switchShared = p.agent === undefined && (p.flags & FLAG_HAS_AGENT) === 0;
      return switchShared ? { lock, mode, task, switchShared, grantHome: p.incarnation, ...acquireSpan } : { lock, mode, task, ...acquireSpan };
    }
    // give up on this request id: a late GRANT is taken silently and released by the abort path
    pool.listen(task, { lock, granted: () => undefined });
    if (local === 'queued' && pool.abortLocal(lock, task)) {
      pool.endTask(task);
    } else {
      const abortRelease = (): void => {
        // unreached aborts may free the lock at the switch; not while this machine has another claim on it (seed 16 regression)
        // (otherInterest includes an undecided local ACQUIRE or timeout-free of the lock: see timeoutFreeUnsafe)
        const toAgent = reached || pool.isRecorded(task) || pool.otherInterest(lock, task);
        const seq = pool.link.send(
          { type: 'release', lock, machine: pool.machine, task, mode, incarnation: 0, flags: FLAG_ABORT | (toAgent ? FLAG_REACHED : 0) },
          (ack) => {
            pool.abortAnswered(task, ack);
            pool.endTask(task);
          },
        );
        pool.abortSent(lock, seq, toAgent);
      };
      // the abort RELEASE is sent only after the ACQUIRE was acknowledged, so it cannot overtake it
      if (acquireSeq === undefined || acked) abortRelease();
      else onAcked = abortRelease;
    }
    deadline.check();
    return undefined;
  }
}
