import { LockFabricError, PROTOCOL_IDS } from '@lockfabric/ports';
import type { LockPacket, SwitchPort } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { computeNodePlugins, coordinatorControlPlane, coordinatorPlugins, pluginProtocolIds } from './plugins.js';

/** A switch link that records what it sends and lets the test deliver packets. */
function recordingLink(): SwitchPort & { sent: LockPacket[]; deliver(p: LockPacket): void } {
  const handlers = new Set<(p: LockPacket) => void>();
  const sent: LockPacket[] = [];
  return {
    sent,
    send: (packet: LockPacket) => void sent.push(packet),
    onPacket: (handler: (p: LockPacket) => void) => (handlers.add(handler), () => handlers.delete(handler)),
    deliver: (p: LockPacket) => handlers.forEach((h) => h(p)),
  } as unknown as SwitchPort & { sent: LockPacket[]; deliver(p: LockPacket): void };
}

describe('node-service plug-ins', () => {
  it('belong to catalog protocols, and the apps get one coordinator and one compute-node plug-in per protocol that has them', () => {
    const ids = pluginProtocolIds();
    expect(ids.length).toBeGreaterThan(0);
    for (const id of ids) expect(PROTOCOL_IDS as readonly string[]).toContain(id);
    const notYet = (): never => {
      throw new Error('not called before the plane starts');
    };
    const coordinator = coordinatorPlugins({ switchControl: notYet, switchCaller: notYet });
    expect(coordinator).toHaveLength(ids.length);
    // each contributes a control-plane driver and counters that read zero before anything ran
    for (const plugin of coordinator) {
      const contributed = Object.values(plugin.controlPlane).flatMap((v: unknown) => (Array.isArray(v) ? v : [v]));
      expect(contributed.some((v) => typeof v === 'function')).toBe(true);
      for (const counter of plugin.counters) for (const reading of counter.read()) expect(reading.total).toBe(0);
    }
    expect(computeNodePlugins().length).toBeGreaterThan(0);
    expect(computeNodePlugins().length).toBeLessThanOrEqual(ids.length);
    // the merged deps keep every recovery driver, switch-following and death-only alike, in plug-in
    // order (two plug-ins' lists are concatenated, not overwritten)
    const merged = coordinatorControlPlane([...coordinator, ...coordinator]);
    const drivers = coordinator.flatMap((p) => p.controlPlane.recoveryDrivers ?? []);
    expect(drivers.length).toBeGreaterThan(1);
    expect(merged.recoveryDrivers).toStrictEqual([...drivers, ...drivers]);
  });

  it('a compute-node plug-in started before it wrapped the switch link refuses with a coded error', () => {
    const [plugin] = computeNodePlugins();
    expect(plugin).toBeDefined();
    let thrown: unknown;
    try {
      plugin?.start({} as never);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(LockFabricError);
  });

  it('the wrapped link passes packets both ways while no recovery holds it, and stops following the link when stopped', () => {
    const [plugin] = computeNodePlugins();
    const link = recordingLink();
    const port = plugin!.wrapSwitch(link);
    const seen: LockPacket[] = [];
    port.onPacket((p) => seen.push(p));
    const packet = { lock: 1 } as unknown as LockPacket;
    port.send(packet);
    link.deliver(packet);
    expect(link.sent).toHaveLength(1);
    expect(seen).toHaveLength(1);
    plugin!.stopSwitch();
    link.deliver(packet);
    expect(seen).toHaveLength(1);
  });
});
