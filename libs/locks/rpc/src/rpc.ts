import { memoryServerProtocol } from '@lockfabric/lock-srvlock';
import type { MemoryServerDesign } from '@lockfabric/lock-srvlock';

/**
 * RPC baseline (ShiftLock §4; ALock §1 "RPC-based locking"): a client SENDs a try-lock to the
 * memory node's CPU, which tries its local reader-writer lock and answers granted or busy; a busy
 * client sends again. No queue: the server CPU and the retries bound it.
 */
export const RPC_DESIGN: MemoryServerDesign = {
  id: 'rpc',
  summary: 'retry-on-fail RPC lock: the memory node CPU try-locks and answers granted/busy; busy clients resend',
  tag: 1,
  tryOnly: true,
  // ShiftLock's artifact runs 8 server threads.
  threads: 8,
  // ShiftLock §4: a failed try is simply re-sent; it states no backoff.
  backoffNs: 0,
};

export const rpc = memoryServerProtocol(RPC_DESIGN);
