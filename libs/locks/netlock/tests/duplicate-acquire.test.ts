import { LockTimeoutError } from '@lockfabric/ports';
import type { LockPacket } from '@lockfabric/ports';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { netlock, netlockProgram } from '../src/index.js';
import { createSwitchNet } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { withEarlyClock } from './early-clock.js';

// Once a live liveness gap: a waiter whose timer wakes a little before its deadline resent
// its ACQUIRE, the switch queued the same request twice, and the client released only the first
// grant: the second entry held the lock for nobody and every later request timed out behind it.
// Now ACQUIREs are resent on purpose, and the switch recognises a request it already queued by
// its per-request register (README, "Lost GRANTs and NOTIFYs").
const EARLY_NS = 2_000;

async function scenario(options?: ProtocolOptions) {
  // The switch half of the mutant is applied where the program is built (harness, switch app).
  const forgetQueued = options?.['mutantResendAcquire'] === 'true';
  const program = netlockProgram({ allocation: [{ lock: 7, base: 0, size: 8 }], ...(forgetQueued ? { mutantForgetQueued: true } : {}) });
  const net = createSwitchNet({ seed: 5, computeNodes: [1, 2, 3], program });
  net.startServices(netlock, options);
  const holder = netlock.createClient(net.clientPorts({ node: 1, client: 0 }), options);
  const late = netlock.createClient(withEarlyClock(net.clientPorts({ node: 2, client: 0 }), EARLY_NS), options);
  const next = netlock.createClient(net.clientPorts({ node: 3, client: 0 }), options);
  const log: string[] = [];
  const run = (async () => {
    const held = await holder.acquire(7, 'exclusive');
    // Queued behind the holder; its 1 ms wait ends a little early, then at the deadline.
    const timedOut = late.acquire(7, 'exclusive', { timeoutMs: 1 }).then(
      () => 'granted',
      (error: unknown) => (error instanceof LockTimeoutError ? 'timed out' : String(error)),
    );
    log.push(`late ${await timedOut}`);
    await holder.release(held);
    // The late request's entry is granted and released by its client; then this one is due.
    const grant = await next.acquire(7, 'exclusive', { timeoutMs: 5 }).catch((error: unknown) => error);
    log.push(grant instanceof Error ? `next ${grant.name}` : 'next granted');
    if (!(grant instanceof Error)) await next.release(grant as Awaited<ReturnType<typeof next.acquire>>);
  })();
  await net.scheduler.run();
  await run;
  await net.stopServices();
  const acquiresOfLate = net.sent.filter(({ packet }: { packet: LockPacket }) => packet.type === 'acquire' && packet.machine === 2).length;
  return { log, acquiresOfLate, repeats: net.sw.counters().decisions['acquire-repeat'] ?? 0, queue: program.queueState(7) };
}

describe('netlock: a request is queued once, whatever the client’s timers do', () => {
  it('a wait that wakes early resends the ACQUIRE, the switch knows it queued; the timed-out entry is released when granted and the lock moves on', async () => {
    const outcome = await scenario();
    expect(outcome.log).toEqual(['late timed out', 'next granted']);
    expect(outcome.acquiresOfLate).toBe(2);
    expect(outcome.repeats).toBe(1);
    expect(outcome.queue).toMatchObject({ count: 0, granted: 0 });
  });

  it('mutant: the old client without its guard, and a switch that does not recognise a queued request: it is queued twice, its second entry is granted to nobody, the next client times out', async () => {
    const outcome = await scenario({ mutantResendAcquire: 'true' });
    expect(outcome.acquiresOfLate).toBe(2);
    expect(outcome.repeats).toBe(0);
    expect(outcome.log).toEqual(['late timed out', 'next LockTimeoutError']);
    expect(outcome.queue).toMatchObject({ granted: 1 });
  });
});
