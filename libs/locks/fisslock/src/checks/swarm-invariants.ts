import type { NodeService, SwarmEndView } from '@lockfabric/locks-common';
import type { NodeId } from '@lockfabric/ports';
import type { SwitchProgram } from '@lockfabric/switch';
import { AgentPool } from '../agent-pool.js';
import type { FissLockDecider } from '../switch/index.js';
import { checkEndState } from './end-state.js';

/** The compute-node service of FissLock (protocol.ts): the node's agent pool, which the swarm's invariants read. */
export interface AgentPoolService extends NodeService {
  readonly pool: AgentPool;
}

/**
 * How long the run goes on after healing before the state is read: the heal probe's last RELEASE
 * and its FREE may still be waiting for an ACK, and a resend backs off (ms of virtual time, faults off).
 */
export const SETTLE_NS = 20_000_000;

/**
 * FissLock's swarm invariants (registered on its swarm profile): once the seed is healed and its
 * resends have settled, no agent is left for a free lock, at most one agent per lock
 * sits where the decider's `mid` says, in the decider's mode (FissLock §4, Lemma 1), and nothing
 * waits for an ACK or a GRANT (checkEndState).
 */
export async function fissLockSwarmInvariants(end: SwarmEndView): Promise<readonly string[]> {
  const decider = end.switchProgram;
  // A multi-rack run has a decider per rack, which the view does not give: not checked (yet).
  if (!isFissLockDecider(decider)) return [];
  await end.settle(SETTLE_NS);
  const pools = new Map<NodeId, AgentPool>();
  for (const [node, service] of end.computeServices) if (isAgentPoolService(service)) pools.set(node, service.pool);
  const state = checkEndState({
    nodes: [...pools.keys()],
    decider,
    pool: (node) => {
      const pool = pools.get(node);
      if (!pool) throw new RangeError(`no agent pool on machine ${node}`);
      return pool;
    },
  });
  // A lock left held (`stuck`) is the heal probe's to judge: it costs liveness, not exclusion (and
  // under FissLock-Local, FissLock §7.4, an idle lock stays held by the agent parked at its home).
  return state.problems;
}

function isAgentPoolService(service: NodeService): service is AgentPoolService {
  return 'pool' in service && service.pool instanceof AgentPool;
}

function isFissLockDecider(program: SwitchProgram | undefined): program is FissLockDecider {
  const p = program as Partial<FissLockDecider> | undefined;
  return typeof p?.meta === 'function' && typeof p.lockCount === 'function';
}
