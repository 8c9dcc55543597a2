import type { ServiceRole } from './identity.js';

/** Who may call a gRPC method, and whether an allowed call is written to the audit log. */
export interface MethodRule {
  readonly roles: readonly ServiceRole[];
  readonly audit: boolean;
}

const ALL: readonly ServiceRole[] = ['memory-node', 'compute-node', 'coordinator', 'switch', 'driver', 'operator'];
/** Control-plane writers: people and programs that run the cluster, never a data-plane node. */
const CONTROL: readonly ServiceRole[] = ['coordinator', 'driver', 'operator'];
const read = (roles: readonly ServiceRole[]): MethodRule => ({ roles, audit: false });
const write = (roles: readonly ServiceRole[]): MethodRule => ({ roles, audit: true });

/**
 * The cluster's access rules by gRPC path: an exact method, else `/<service>/*`. A path no rule
 * names is refused (a service added later is closed until someone writes its rule).
 */
export const ACCESS_POLICY: Readonly<Record<string, MethodRule>> = {
  // Verbs: compute nodes run the protocols; the coordinator and the CLI read tables in recovery and checks.
  '/lockfabric.v1.MemoryService/*': read(['compute-node', 'coordinator', 'driver', 'operator']),
  // Runs are started by the driver (`lockfabric bench`, `run`).
  '/lockfabric.v1.ComputeNodeService/*': read(['driver', 'operator']),
  '/lockfabric.v1.SwitchControlService/Describe': read(ALL),
  '/lockfabric.v1.SwitchControlService/ReadRegisters': read(CONTROL),
  '/lockfabric.v1.SwitchControlService/*': write(CONTROL),
  '/lockfabric.v1.CoordinatorService/Status': read(ALL),
  '/lockfabric.v1.LockAdminService/*': write(CONTROL),
  // `lockfabric transport`'s echo server measures the raw round trip; it touches no state.
  '/lockfabric.raw.Echo/*': read(ALL),
};

/**
 * A compute node's descriptor slots (its own MemoryService): peers' clients write their queue links
 * there, and so do clients a memory node hosts beside its table (ALock's local cohort). A memory
 * node still may not call another memory node's table.
 */
export const DESCRIPTOR_ACCESS_POLICY: Readonly<Record<string, MethodRule>> = {
  ...ACCESS_POLICY,
  '/lockfabric.v1.MemoryService/*': read(['compute-node', 'memory-node', 'coordinator', 'driver', 'operator']),
};

export function ruleFor(path: string, policy: Readonly<Record<string, MethodRule>> = ACCESS_POLICY): MethodRule | undefined {
  const exact = policy[path];
  if (exact) return exact;
  const service = path.slice(0, path.lastIndexOf('/') + 1);
  return policy[`${service}*`];
}
