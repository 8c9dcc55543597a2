import type { FissPoolHandle } from '@lockfabric/lock-catalog-control';
import { existingAgentPool, isMachineFenced, machineRecovery, readFissLockOptions } from '@lockfabric/lock-catalog';
import type { AgentPool } from '@lockfabric/lock-catalog';
import type { NodeId } from '@lockfabric/ports';
import type { CurrentRun } from '@lockfabric/run-host';

/** The agent pool of the running (or lingering) FissLock run on `node`. */
export function fissAgentPoolOf(run: CurrentRun | undefined, node: NodeId): AgentPool | undefined {
  // Pools are registered per run's lock table by FissLock's node service alone: another protocol's run has none.
  return run ? existingAgentPool(run.locks, node) : undefined;
}

/** The recovery steps of that pool, with its policy; none once the node fenced itself (it was declared dead: it takes no part). */
export function fissPoolOf(run: CurrentRun | undefined, node: NodeId): FissPoolHandle | undefined {
  const pool = fissAgentPoolOf(run, node);
  if (!pool || !run || isMachineFenced(pool)) return undefined;
  return { pool: machineRecovery(pool), policy: readFissLockOptions(run.options).policy };
}
