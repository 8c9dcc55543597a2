import { memoryServerProtocol } from '@lockfabric/lock-srvlock';
import type { MemoryServerDesign } from '@lockfabric/lock-srvlock';

/**
 * RPC baseline (ShiftLock §4; ALock §1 "RPC-based locking"): a client SENDs a try-lock to the
 * memory node's CPU, which tries its local reader-writer lock and answers granted or busy; a busy
 * client sends again. No queue: the server CPU and the retries bound it.
 */
export const RPC_DESIGN: MemoryServerDesign = {
  id: 'rpc',
  // On sim/embedded the manager acts on the FailureNotice as srvlock; the live memory node does not
  // pass notices to protocol services yet, so there the holds stay.
  recovery: { compute: { mechanism: 'fence', action: 'the memory node fences the dead node; its lock manager drops the node\'s holds and queued requests, grants the waiters behind them and ignores its later requests for the run, before the memory node reports on ctl.recovery.phase (sim/embedded: on the FailureNotice, as srvlock)' } },
  summary: 'retry-on-fail RPC lock: the memory node CPU try-locks and answers granted/busy; busy clients resend',
  tag: 1,
  tryOnly: true,
  // ShiftLock's artifact runs 8 server threads.
  threads: 8,
  // ShiftLock §4 only says a failed try is re-sent. We pace retries with the truncated exponential
  // backoff of its CAS baseline (SMART): 1 µs doubling to 100 µs; without it a crashed holder makes
  // every waiter re-send back to back until its timeout.
  backoffNs: 1_000,
  backoffCapNs: 100_000,
};

export const rpc = memoryServerProtocol(RPC_DESIGN);
