import { SERVICE_CLIENT } from '@lockfabric/locks-common';
import type { NodeService, ProtocolOptions } from '@lockfabric/locks-common';
import type { LockPacket, NodeId, SwitchPort, Trace } from '@lockfabric/ports';
import { createSimCluster } from '@lockfabric/sim';
import { fissLockDecider } from '../../src/switch/index.js';
import type { FaultSpec, Switch } from '@lockfabric/switch';
import type { FissLockDecider, FissLockPolicy } from '../../src/switch/index.js';
import { FissLockClient } from '../../src/client.js';
import { RecoverableFissLockClient } from '../../src/recovery/recovery-client.js';
import type { DeciderControl } from '../../src/recovery/switch-image.js';
import { readFissLockOptions } from '../../src/options.js';
import { startAgentPool } from '../../src/protocol.js';
import { existingAgentPool } from '../../src/registry.js';
import type { AgentPool } from '../../src/agent-pool.js';

export interface FissSimOptions {
  readonly seed?: number;
  readonly locks?: number;
  readonly computeNodes?: number;
  readonly policy?: FissLockPolicy;
  readonly faults?: FaultSpec;
  readonly protocolOptions?: ProtocolOptions;
  readonly mutantNoIncarnationCheck?: boolean;
  readonly trace?: Trace;
  /** Locks the decider holds registers for (default: all `locks`); higher ids fall back to ParLock (§6.6). */
  readonly switchLocks?: number;
  /** Sees every packet between a machine and the switch at its virtual time (`out`: machine → switch; `in`: as delivered, before scripted `in` faults). */
  readonly tap?: (direction: 'in' | 'out', machine: NodeId, p: LockPacket, nowNs: number) => void;
  /** Clients keep recovery records (RecoverableFissLockClient, as createFissLockClient makes them): needed by S1 of a repair. */
  readonly recoverableClients?: boolean;
}

/** The decider's control plane as the switch CPU sees it (what switch-dataplane exposes over gRPC). */
export function deciderControlOf(sw: Switch): DeciderControl {
  return sw.registerControl();
}

/**
 * A scripted one-shot fault on one machine's link: the first packet matching `match` that goes
 * `out` (machine → switch) or comes `in` (switch → machine) is dropped, duplicated or delayed.
 */
export interface ScriptedFault {
  readonly direction: 'in' | 'out';
  readonly machine: NodeId;
  readonly match: (p: LockPacket) => boolean;
  readonly action: 'drop' | 'duplicate' | { readonly delayNs: number } | { readonly duplicateAfterNs: number };
}

export interface Seen {
  readonly to: NodeId;
  readonly type: string;
  readonly machine: NodeId;
  readonly flags: number;
}

/** A sim cluster wired to the FissLock decider, agent pools started, and a tap on every egressed packet. */
export function fissSim(options: FissSimOptions = {}) {
  const decider: FissLockDecider = fissLockDecider({
    lockCount: options.switchLocks ?? options.locks ?? 8,
    policy: options.policy ?? 'read-preferring',
    mutantNoIncarnationCheck: options.mutantNoIncarnationCheck === true,
  });
  const { cluster, scheduler } = createSimCluster({
    seed: options.seed ?? 1,
    lockCount: options.locks ?? 8,
    entryBytes: 8,
    computeNodes: options.computeNodes ?? 3,
    memoryNodes: 1,
    switchProgram: decider,
    ...(options.faults ? { switchFaults: options.faults } : {}),
    ...(options.trace ? { trace: options.trace } : {}),
  });
  const protocolOptions: ProtocolOptions = {
    policy: options.policy ?? 'read-preferring',
    ...(options.switchLocks !== undefined ? { switchCapacity: options.switchLocks } : {}),
    ...options.protocolOptions,
  };
  const nodes = cluster.computeNodeIds;
  // every machine's agent pool (and so its clients, which share it) talks through a scriptable link
  const script: (ScriptedFault & { fired?: LockPacket })[] = [];
  const apply = (direction: 'in' | 'out', machine: NodeId, p: LockPacket, pass: (p: LockPacket) => void): void => {
    if (direction === 'out') options.tap?.(direction, machine, p, cluster.clock.nowNs());
    const rule = script.find((r) => !r.fired && r.direction === direction && r.machine === machine && r.match(p));
    if (!rule) return pass(p);
    rule.fired = p;
    if (rule.action === 'drop') return;
    if (rule.action === 'duplicate') {
      pass(p);
      pass(p);
      return;
    }
    if ('duplicateAfterNs' in rule.action) {
      pass(p);
      void cluster.clock.sleep(rule.action.duplicateAfterNs).then(() => pass(p));
      return;
    }
    void cluster.clock.sleep(rule.action.delayNs).then(() => pass(p));
  };
  const scripted = (port: SwitchPort): SwitchPort => ({
    machine: port.machine,
    send: (p) => apply('out', port.machine, p, (q) => port.send(q)),
    onPacket: (handler) => port.onPacket((p) => apply('in', port.machine, p, handler)),
  });
  // the tap sees each delivery once, before any handler of the machine (the pool and the fallback
  // manager each subscribe to the link, so tapping inside `apply` would log a packet twice)
  const tap = options.tap;
  if (tap) for (const node of nodes) cluster.switchPort(node).onPacket((p: LockPacket) => tap('in', node, p, cluster.clock.nowNs()));
  const services: NodeService[] = nodes.map((node) => {
    const ports = cluster.clientPorts({ node, client: SERVICE_CLIENT });
    const switchPort = ports.switchPort ? scripted(ports.switchPort) : undefined;
    return startAgentPool({ ports: switchPort ? { ...ports, switchPort } : ports, memoryNodes: cluster.memoryNodeIds, computeNodes: nodes }, protocolOptions);
  });
  const seen: Seen[] = [];
  for (const node of nodes) cluster.switchPort(node).onPacket((p: LockPacket) => seen.push({ to: node, type: p.type, machine: p.machine, flags: p.flags }));
  const client = (node: NodeId, index: number): FissLockClient | RecoverableFissLockClient =>
    options.recoverableClients === true
      ? new RecoverableFissLockClient(cluster.clientPorts({ node, client: index }), readFissLockOptions(protocolOptions))
      : new FissLockClient(cluster.clientPorts({ node, client: index }), readFissLockOptions(protocolOptions));
  // looked up without making ports: clientPorts() forks the run's random stream, which would perturb the schedule
  const pool = (node: NodeId): AgentPool => {
    const found = existingAgentPool(cluster.layout, node);
    if (!found) throw new Error(`no agent pool on machine ${node}`);
    return found;
  };
  const sw = cluster.switch;
  if (!sw) throw new Error('no switch');
  return {
    cluster,
    scheduler,
    decider,
    sw,
    nodes,
    seen,
    /** Adds a one-shot scripted fault; returns the rule, whose `fired` is the packet it hit. */
    fault: (rule: ScriptedFault) => {
      const entry: ScriptedFault & { fired?: LockPacket } = { ...rule };
      script.push(entry);
      return entry;
    },
    client,
    pool,
    /** Runs the simulation for `ns` of virtual time (pending acquires keep T_ACQ timers, so `run()` would reach them). */
    step: (ns = 500_000) => scheduler.run({ untilNs: scheduler.nowNs() + ns }),
    stop: async () => {
      for (const s of services) await s.stop();
    },
  };
}
