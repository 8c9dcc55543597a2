import { protocolById } from '@lockfabric/lock-catalog';
import { REDLOCK_PROTOCOL_ID } from '@lockfabric/smallbank/protocol-id';

/** A protocol's family as reports show it: `rdma` (emulated NIC verbs), `switch` (the emulated switch) or `redis` (RedLock). */
export function familyOf(protocol: string): 'rdma' | 'switch' | 'redis' {
  if (protocol === REDLOCK_PROTOCOL_ID) return 'redis';
  return protocolById(protocol).fabric === 'switch' ? 'switch' : 'rdma';
}
