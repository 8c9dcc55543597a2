import { DEFAULT_SWITCH_CAPACITY, fisslock, switchCapacityOf } from '@lockfabric/lock-fisslock';
import type { LockPacket } from '@lockfabric/ports';
import { createSimCluster } from '@lockfabric/sim';
import { DEFAULT_INGRESS_STAGES, DEFAULT_MAU_CAPACITY_BITS, Switch, expandEgress } from '@lockfabric/switch';
import { fissLockDecider, lockCapacity } from '@lockfabric/lock-fisslock';
import type { FissLockDecider } from '@lockfabric/lock-fisslock';
import { describe, expect, it } from 'vitest';
import { buildSwitchProgram } from '@lockfabric/harness';

/**
 * The FissLock client splits ids at DEFAULT_SWITCH_CAPACITY, the decider at its own capacity: if
 * they ever differ, ids between the two are sent as fallback packets to a decider that takes them
 * for its own, or the other way round. A run builds the decider through the protocol definition.
 */
describe('switch capacity: the decider and the FissLock client agree', () => {
  it('the default decider holds exactly the capacity the client assumes', () => {
    const program = fissLockDecider();
    new Switch(program);
    expect(program.capacity()).toBe(DEFAULT_SWITCH_CAPACITY);
    expect(program.lockCount()).toBe(DEFAULT_SWITCH_CAPACITY);
    expect(lockCapacity(DEFAULT_INGRESS_STAGES, DEFAULT_MAU_CAPACITY_BITS)).toBe(DEFAULT_SWITCH_CAPACITY);
  });

  it('would catch the disagreement the audit found: 560 KiB MAUs give a capacity the client does not assume', () => {
    const kib = fissLockDecider();
    new Switch(kib, { pipeline: { mauCapacityBits: 560 * 1024 * 8 } });
    expect(kib.capacity()).toBe(1_720_320);
    expect(kib.capacity()).not.toBe(DEFAULT_SWITCH_CAPACITY);
  });

  it('at the boundary, the id the client sends to ParLock is the first the harness decider forwards', () => {
    const locks = DEFAULT_SWITCH_CAPACITY + 4;
    const spec = { clients: 1, locks, readRatio: 0, distribution: 'uniform' as const, operations: 1, thinkNs: 0, criticalSectionNs: 0, seed: 1 };
    const program = buildSwitchProgram('fisslock', spec, {}, fisslock.buildSwitchProgram) as FissLockDecider;
    const { cluster } = createSimCluster({ seed: 1, lockCount: locks, entryBytes: 8, computeNodes: 1, switchProgram: program });
    const node = cluster.computeNodeIds[0] as number;
    const clientBoundary = switchCapacityOf(cluster.clientPorts({ node, client: 0 }), 0);
    expect(clientBoundary).toBe(program.lockCount());
    const sw = new Switch(buildSwitchProgram('fisslock', spec, {}, fisslock.buildSwitchProgram));
    const send = (lock: number, seq: number) => {
      const p: LockPacket = { type: 'acquire', lock, machine: node, task: 1, mode: 'exclusive', incarnation: 0, seq, flags: 0, agent: node, dst: node };
      return expandEgress(sw.ingest(p, node), node).map((c) => [c.machine, c.packet.type]);
    };
    // the last on-switch id is granted by the decider; the first fallback id goes on to its owner
    expect(send(clientBoundary - 1, 1)).toStrictEqual([[node, 'grant']]);
    expect(send(clientBoundary, 1)).toStrictEqual([[node, 'acquire']]);
    expect(sw.counters().decisions['fallback-routed']).toBe(1);
  });
});
