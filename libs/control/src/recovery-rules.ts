import type { ProtocolRecovery, RecoveryRule } from '@lockfabric/locks-common';

export type { ProtocolRecovery, RecoveryMechanism, RecoveryRule } from '@lockfabric/locks-common';

/**
 * Each protocol's recovery rules by protocol id, as its definition declares them
 * (`ProtocolDefinition.recovery`): live, the lock catalog's `protocolRecoveries()`; in sim, the
 * run's own protocol. The control plane books one action per rule and names no protocol itself.
 */
export type ProtocolRecoveries = ReadonlyMap<string, ProtocolRecovery>;

/** A memory node's table is gone with the process, whichever protocol it served. */
const MEMORY_RULES: ReadonlyMap<string, RecoveryRule> = new Map([['*', { mechanism: 'await-restart', action: 'lock table lost; re-initialise (zero) it before use' }]]);

/** Which protocols lose state when a member of `role` fails, and how it comes back. */
export function rulesFor(role: string, protocols: ProtocolRecoveries = new Map()): ReadonlyMap<string, RecoveryRule> {
  if (role === 'memory') return MEMORY_RULES;
  if (role !== 'compute' && role !== 'switch') return new Map();
  return new Map([...protocols].flatMap(([id, recovery]) => {
    const rule = recovery[role];
    return rule ? [[id, rule] as const] : [];
  }));
}

/**
 * The protocols whose compute-death recovery is the control plane's queue-lock recovery: each says
 * so in its rule (`driver: 'queue-lock'`). In `protocols`' order.
 */
export function queueLockProtocols(protocols: ProtocolRecoveries = new Map()): readonly string[] {
  return [...protocols].filter(([, recovery]) => recovery.compute.mechanism === 'driven' && recovery.compute.driver === 'queue-lock').map(([id]) => id);
}
