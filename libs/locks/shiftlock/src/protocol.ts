import type { ProtocolDefinition } from '@lockfabric/locks-common';
import { ENTRY_BYTES } from './lock-entry.js';
import { SHIFTLOCK_OPTION_HELP, readShiftLockOptions } from './options.js';
import { ShiftLockClient } from './shiftlock.js';
import { ShiftLockRecoveryServer } from './recovery-server.js';

export const shiftlock: ProtocolDefinition = {
  id: 'shiftlock',
  // RelCnt watching fires after 3·T_lease, then an era-fenced reset through the memory node.
  recovery: { compute: { mechanism: 'lease', boundMs: 30, action: 'RelCnt watch (3·T_lease) then era-fenced reset by the memory-node recovery server' } },
  // Live: T_lease 10 ms assumes RDMA hold times; a loaded live node stalls for tens of ms, and every
  // stall past 3·T_lease resets a lock under a live holder (fenced, but the hold is lost).
  liveDefaults: { leaseNs: 100_000_000 },
  // Lease-based failure detection and era-fenced reset recover dead holders and waiters (ShiftLock §3.5).
  // T_lease short enough that 3·T_lease detection fits a small run's heal budget.
  swarm: { crashes: true, nodeKill: true, memoryRestart: true, flushedVerbs: true, pauses: 'beyond-lease', options: (random) => ({ leaseNs: [500_000, 1_000_000, 2_000_000][random.int(3)]! }) },
  summary: 'ShiftLock (FAST 25): 16-byte entry with masked atomics, MCS queue of writers with SEND handover, batched readers, era-fenced recovery',
  fabric: 'verbs',
  // The client needs extended atomics and SEND; the recovery server on a memory node also uses CPU access there.
  capabilities: ['masked-atomics', 'send'],
  entryBytes: ENTRY_BYTES,
  modes: ['shared', 'exclusive'],
  options: SHIFTLOCK_OPTION_HELP,
  // Read by clients and the recovery server alike: a live run setting them would split the two.
  memoryServiceOptions: ['recoveryClient', 'eraBuckets'],
  createClient: (ports, options) => new ShiftLockClient(ports, readShiftLockOptions(options)),
  services: {
    // Era-fenced recovery runs on every memory node (as client SERVICE_CLIENT = recoveryClient there).
    memory: ({ ports }, options) => {
      const server = new ShiftLockRecoveryServer(ports, options);
      const stop = new AbortController();
      void server.serve(stop.signal).catch(() => undefined);
      return { stop: () => stop.abort() };
    },
  },
};
