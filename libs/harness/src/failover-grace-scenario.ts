// The grace scenario of a lock manager's failover, shared by the parlock and srvlock tests.
import type { NodeService, ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import type { LockId, NodeId } from '@lockfabric/ports';
import { forwardProgram } from '@lockfabric/switch';
import { createSwitchNet } from './switch-net.js';
import { ScenarioSetupError } from './errors.js';

const MS = 1_000_000;

export interface FailoverGraceCase {
  readonly protocol: ProtocolDefinition;
  readonly protocolOptions: ProtocolOptions;
  readonly seed: number;
  readonly computeNodes: readonly NodeId[];
  /** The manager that dies while `holderNode` holds `lock`, which it had granted. */
  readonly deadNode: NodeId;
  readonly holderNode: NodeId;
  /** Asks for `lock` after the notice; its node's manager is the lock's new home. */
  readonly waiterNode: NodeId;
  readonly lock: LockId;
  /** Another lock of the dead manager, never held: the new home serves it once grace is over. */
  readonly freshLock: LockId;
}

export interface FailoverGraceOutcome<S extends NodeService> {
  readonly grantedAtNs: number;
  readonly releasedAtNs: number;
  /** The waiter's node's manager (the new home). */
  readonly newHome: S;
}

/**
 * A survivor holds a lock its manager granted when that manager dies; after the notice, a client
 * on the lock's new home asks for it. A correct new home grants only after the holder's release
 * (it reclaimed the hold during its grace); one that serves early grants beside the holder.
 */
export async function failoverGraceScenario<S extends NodeService>(c: FailoverGraceCase): Promise<FailoverGraceOutcome<S>> {
  const net = createSwitchNet({ seed: c.seed, computeNodes: c.computeNodes, program: forwardProgram() });
  const managers = new Map<NodeId, NodeService>();
  const compute = c.protocol.services?.compute;
  if (!compute) throw new ScenarioSetupError('failover grace', `${c.protocol.id} has no compute-node service to fail over`);
  net.startServices(
    {
      ...c.protocol,
      services: {
        compute: (context, options) => {
          const service = compute(context, options);
          managers.set(context.ports.self.node, service);
          return service;
        },
      },
    },
    c.protocolOptions,
  );
  const holder = c.protocol.createClient(net.clientPorts({ node: c.holderNode, client: 0 }), c.protocolOptions);
  const waiter = c.protocol.createClient(net.clientPorts({ node: c.waiterNode, client: 0 }), c.protocolOptions);
  const later = c.protocol.createClient(net.clientPorts({ node: c.holderNode, client: 1 }), c.protocolOptions);
  const run = (async () => {
    const held = await holder.acquire(c.lock, 'exclusive');
    await net.clock.sleep(0.5 * MS);
    await net.stopServicesOf(c.deadNode);
    net.failures.fire(c.deadNode);
    let grantedAtNs = -1;
    const waiting = waiter.acquire(c.lock, 'exclusive', { timeoutMs: 40 }).then((g) => ((grantedAtNs = net.clock.nowNs()), g));
    await net.clock.sleep(15 * MS);
    const releasedAtNs = net.clock.nowNs();
    await holder.release(held);
    await waiter.release(await waiting);
    const fresh = await later.acquire(c.freshLock, 'exclusive', { timeoutMs: 40 });
    await later.release(fresh);
    return { grantedAtNs, releasedAtNs };
  })();
  await net.scheduler.run();
  const outcome = await run;
  await net.stopServices();
  const newHome = managers.get(c.waiterNode);
  if (!newHome) throw new ScenarioSetupError('failover grace', `no manager started on node ${c.waiterNode}`);
  return { ...outcome, newHome: newHome as S };
}
