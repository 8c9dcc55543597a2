import type { SwarmEndView } from '@lockfabric/locks-common';
import { isNetLockProgram } from './switch-program/index.js';

/**
 * How long the run goes on after healing before the queues are read: the heal probe's last
 * RELEASE may still wait for its ACK, and a request that timed out leaves an entry its client
 * releases once granted (virtual time, faults off).
 */
export const NETLOCK_SETTLE_NS = 20_000_000;

/**
 * NetLock's swarm invariants (registered on its swarm profile): once the seed is healed and every
 * client is done, each hot lock's switch queue is empty, and above all holds no entry of a machine
 * that is gone (the coordinator's purge takes those out: README). An entry left
 * behind is a lock the switch believes held or wanted by nobody who will ever release it.
 */
export async function netlockSwarmInvariants(end: SwarmEndView): Promise<readonly string[]> {
  const program = end.switchProgram;
  // A multi-rack run has a program per rack, which the view does not give: not checked.
  if (!isNetLockProgram(program)) return [];
  await end.settle(NETLOCK_SETTLE_NS);
  const problems: string[] = [];
  for (const [lock, machines] of program.queueMachines()) {
    if (machines.length === 0) continue;
    const dead = machines.filter((m) => !end.computeServices.has(m));
    const deadNote = dead.length > 0 ? `; ${dead.length} of dead machine ${[...new Set(dead)].join(', ')}` : '';
    problems.push(`lock ${lock}: ${machines.length} entries left in its switch queue after healing (machines ${machines.join(', ')}${deadNote})`);
  }
  return problems;
}
