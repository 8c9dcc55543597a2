import { protocolById } from '@lockfabric/lock-catalog';

/** A protocol's family as reports show it: `rdma` (emulated NIC verbs) or `switch` (the emulated switch). */
export function familyOf(protocol: string): 'rdma' | 'switch' {
  return protocolById(protocol).fabric === 'switch' ? 'switch' : 'rdma';
}
