import { forwardProgram } from '@lockfabric/switch';
import type { FaultSpec } from '@lockfabric/switch';
import type { LockPacket } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { createSimCluster } from './substrates.js';

/** Sends one ACQUIRE and one RELEASE from the first compute node to the second; returns what arrived and what the switch ingested. */
async function exchange(switchFaults?: FaultSpec) {
  const program = forwardProgram();
  const { cluster, scheduler } = createSimCluster({ seed: 1, lockCount: 16, entryBytes: 8, computeNodes: 2, switchProgram: program, switchLinks: 'fifo', ...(switchFaults ? { switchFaults } : {}) });
  const [from, to] = cluster.computeNodeIds as [number, number];
  const arrived: string[] = [];
  cluster.switchPort(to).onPacket((packet) => arrived.push(`${packet.type}@${scheduler.nowNs()}`));
  const sender = cluster.switchPort(from);
  const packet = (type: 'acquire' | 'release', seq: number): LockPacket => ({ type, lock: 1, machine: from, task: 0, mode: 'exclusive', incarnation: 0, seq, flags: 0, dst: to });
  sender.send(packet('acquire', 1));
  sender.send(packet('release', 2));
  await scheduler.run();
  return { arrived: arrived.map((entry) => entry.split('@')[0]), times: arrived.map((entry) => Number(entry.split('@')[1])), ingested: cluster.switch?.counters().packets ?? -1 };
}

describe('sim: faults on the machine→switch link (ingress)', () => {
  it('an ingress loss rule for ACQUIREs: the switch never sees it, the RELEASE passes', async () => {
    const outcome = await exchange({ rules: [{ direction: 'ingress', packetTypes: ['acquire'], loss: 1 }] });
    expect(outcome.arrived).toEqual(['release']);
    expect(outcome.ingested).toBe(1);
  });

  it('an ingress duplicate is ingested twice; an egress rule of the same kind leaves ingress alone', async () => {
    const twice = await exchange({ rules: [{ direction: 'ingress', packetTypes: ['acquire'], duplicate: 1 }] });
    expect(twice.ingested).toBe(3);
    expect(twice.arrived.filter((type) => type === 'acquire')).toHaveLength(2);
    const egress = await exchange({ rules: [{ packetTypes: ['acquire'], duplicate: 1 }] });
    expect(egress.ingested).toBe(2);
    expect(egress.arrived.filter((type) => type === 'acquire')).toHaveLength(2);
  });

  it('an ingress delay lets the RELEASE overtake the ACQUIRE on a FIFO link', async () => {
    const plain = await exchange();
    expect(plain.arrived).toEqual(['acquire', 'release']);
    const delayed = await exchange({ rules: [{ direction: 'ingress', packetTypes: ['acquire'], delay: 1, delayNsMin: 50_000, delayNsMax: 50_000 }] });
    expect(delayed.arrived).toEqual(['release', 'acquire']);
  });
});
