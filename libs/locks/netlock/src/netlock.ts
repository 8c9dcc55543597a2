import { OptionReader } from '@lockfabric/locks-common';
import type { ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import { LockServer, ServerLockClient, srvLockServer } from '@lockfabric/lock-srvlock';
import { withAcquireOnce } from './acquire-once.js';
import { withReliableRelease } from './reliable-release.js';
import { withRequestLedger } from './request-ledger.js';
import { withSlotEcho } from './slot-echo.js';
import { netlockSwarmInvariants } from './swarm-invariants.js';
import { allocateSwitchQueues, profileLockTrace } from './switch-program/allocation.js';
import { netlockProgram } from './switch-program/netlock-program.js';

/** Requests in the pre-run trace a simulated run profiles, and the switch's queue slots there. */
const SIM_PROFILE_SAMPLES = 20_000;
const SIM_SLOT_BUDGET = 4_096;

export const NETLOCK_OPTION_HELP = {
  retransmitNs: 'resend an unanswered ACQUIRE, RELEASE or cancel after this many ns (default 5000000; doubling up to 64x for switch releases and cancel polls)',
  maxAttempts: 'RELEASE/cancel attempts before FabricAccessError (default 50)',
  pushBackNs: 'bound of the random backoff after a push-back from a full switch queue, in ns (default 20000)',
  mutantReleaseAllHolders: 'test-only: the lock server clears every holder on one release (broken on purpose)',
  mutantReleaseWithoutSlot: 'test-only: releases of switch grants do not name their queue slot (broken on purpose)',
  mutantResendAcquire: 'test-only: an ACQUIRE repeated before its request was answered reaches the switch (broken on purpose)',
  mutantUncheckedNotify: 'test-only: the switch grants on a CONTINUE notify without checking its entry serial (broken on purpose)',
  mutantPurgeWithoutGrant: 'test-only: the purge of a dead machine grants nobody behind its entries (broken on purpose)',
  mutantSendOnce: 'test-only: a RELEASE of a switch grant is sent once and never resent (the old client; broken on purpose)',
  mutantCountDuplicateRelease: 'test-only: the switch counts a resent RELEASE again (broken on purpose)',
  mutantLastReleasedOnly: 'test-only: the switch knows only the serial last released per slot, so a late resent RELEASE counts against the next entry (broken on purpose)',
  mutantGrantOnce: 'test-only: the old client and switch: an ACQUIRE is sent once, the switch never sends a GRANT again (broken on purpose)',
};

export function readNetLockOptions(options?: ProtocolOptions) {
  const reader = new OptionReader('netlock', options);
  const parsed = {
    retransmitNs: reader.number('retransmitNs', 5_000_000, { min: 1_000 }),
    maxAttempts: reader.number('maxAttempts', 50, { min: 1, integer: true }),
    pushBackNs: reader.number('pushBackNs', 20_000, { min: 1 }),
    mutantReleaseAllHolders: reader.boolean('mutantReleaseAllHolders', false),
    mutantReleaseWithoutSlot: reader.boolean('mutantReleaseWithoutSlot', false),
    mutantResendAcquire: reader.boolean('mutantResendAcquire', false),
    // read here so that the option is validated; the switch program (harness) applies it
    mutantUncheckedNotify: reader.boolean('mutantUncheckedNotify', false),
    mutantPurgeWithoutGrant: reader.boolean('mutantPurgeWithoutGrant', false),
    mutantSendOnce: reader.boolean('mutantSendOnce', false),
    mutantCountDuplicateRelease: reader.boolean('mutantCountDuplicateRelease', false),
    mutantGrantOnce: reader.boolean('mutantGrantOnce', false),
    mutantLastReleasedOnly: reader.boolean('mutantLastReleasedOnly', false),
  };
  reader.done();
  return parsed;
}

/**
 * NetLock: hot locks (chosen offline by the knapsack allocation over a profiled trace and
 * installed in the switch's `netlock` program) are queued and granted in switch memory; every
 * other lock is served by one lock server (the lowest compute node, as SrvLock). Clients address
 * every request to the server; the switch intercepts those of hot locks. A switch grant is
 * released to the switch and acknowledged (1 packet out + 1 in per acquire, the same per
 * release); a full switch queue answers push-back and the client retries after a random backoff.
 * A switch grant names the grantee's queue slot and the release echoes it (`withSlotEcho`), so
 * the switch marks that entry released, whatever the order readers release in.
 * Unanswered ACQUIREs and cancels are resent: the switch recognises a request it queued (its
 * per-request register) and sends a granted one's GRANT again, so a lost GRANT costs time, never
 * the lock; `withRequestLedger` drops repeated GRANTs and releases those nobody waits for. An
 * acquire that gives up while its request sits in a switch queue releases the grant when it
 * arrives, because the data plane cannot take an entry out of the middle of a queue. A dead
 * node's entries are taken out by the control plane instead: the coordinator's purge (README).
 */
export const netlock: ProtocolDefinition = {
  id: 'netlock',
  // Hot locks: the coordinator purges the dead node's switch-queue entries (libs/locks/netlock/control
  // netlock-purge.ts); done when the switch answers.
  recovery: {
    compute: { mechanism: 'driven', action: 'hot locks (switch queues): the coordinator calls SwitchControl.PurgeNetLockMachine, which fences the dead machine in the switch and removes its queue entries, granting the waiters behind them; cold locks: the lock server drops the dead node\'s holds and queued requests on the FailureNotice and fences it, as srvlock' },
    switch: { mechanism: 'await-restart', action: 'switch queues lost; rebuild from clients' },
  },
  // A dead node's switch-queued holds are purged by the coordinator (in sim too: the switch model's purge).
  // Lost and duplicated packets (switch faults, partitions) cost time only: RELEASEs, ACQUIREs and cancels are resent.
  // After healing, every switch queue must be empty, with no entry of a dead machine (swarm-invariants.ts).
  swarm: { pauses: 'beyond-lease', switchFaults: 'lossy', partitions: true, nodeKill: true, memoryRestart: true, flushedVerbs: true, invariants: netlockSwarmInvariants },
  summary: 'hot locks queued in switch memory (knapsack-allocated from a profiled trace), the rest on one lock server',
  fabric: 'switch',
  capabilities: ['send'],
  entryBytes: 8,
  modes: ['shared', 'exclusive'],
  options: NETLOCK_OPTION_HELP,
  switchProgram: 'netlock',
  // NetLock's offline step (its paper's memory allocation): profile a pre-run trace, then solve the
  // knapsack of hot-lock queues within the switch's slot budget.
  buildSwitchProgram: ({ options, sampleLockTrace }) => {
    const on = (name: string) => options[name] === true || options[name] === 'true';
    return netlockProgram({
      slotBudget: SIM_SLOT_BUDGET,
      allocation: allocateSwitchQueues(profileLockTrace(sampleLockTrace(SIM_PROFILE_SAMPLES)), SIM_SLOT_BUDGET),
      ...(on('mutantUncheckedNotify') ? { mutantUncheckedNotify: true } : {}),
      ...(on('mutantPurgeWithoutGrant') ? { mutantPurgeWithoutGrant: true } : {}),
      ...(on('mutantCountDuplicateRelease') ? { mutantCountDuplicateRelease: true } : {}),
      ...(on('mutantGrantOnce') || on('mutantResendAcquire') ? { mutantForgetQueued: true } : {}),
      ...(on('mutantLastReleasedOnly') ? { mutantLastReleasedOnly: true } : {}),
    });
  },
  services: {
    compute: (context, options) => {
      const parsed = readNetLockOptions(options);
      return new LockServer(context, {
        managesLocks: context.ports.self.node === srvLockServer(context.computeNodes),
        mutantReleaseAllHolders: parsed.mutantReleaseAllHolders,
      });
    },
  },
  createClient: (ports, options) => {
    const parsed = readNetLockOptions(options);
    const retransmitNs = parsed.retransmitNs;
    const reliable = (inner: typeof ports) => (parsed.mutantSendOnce ? inner : withReliableRelease(inner, { retransmitNs, maxAttempts: parsed.maxAttempts }));
    // The old client (mutants): each ACQUIRE sent once (or, unguarded, again on an early wake).
    const old = parsed.mutantGrantOnce || parsed.mutantResendAcquire;
    const link = old ? reliable(parsed.mutantResendAcquire ? ports : withAcquireOnce(ports)) : withRequestLedger(reliable(ports), { retransmitNs, maxAttempts: parsed.maxAttempts });
    return new ServerLockClient(parsed.mutantReleaseWithoutSlot ? link : withSlotEcho(link), {
      protocol: 'netlock',
      retransmitNs,
      // Resent ACQUIREs are safe: the switch recognises a request it queued and sends its GRANT again.
      retransmitAcquire: !old,
      maxAttempts: parsed.maxAttempts,
      pushBackNs: parsed.pushBackNs,
      route: (_lock, nodes) => ({ kind: 'packet', dst: srvLockServer(nodes) }),
    });
  },
};
