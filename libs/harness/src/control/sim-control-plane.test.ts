import { NS_PER_MS } from '@lockfabric/ports';
import { SchedulerClock, VirtualScheduler } from '@lockfabric/sim';
import { describe, expect, it } from 'vitest';
import type { InProcessControlPlugin } from '@lockfabric/control';
import { SimControlPlane } from './sim-control-plane.js';

const NODES = [1, 2, 3];
const H_MS = 1;
const K = 2;

function cluster(plugins: readonly InProcessControlPlugin[] = []) {
  const scheduler = new VirtualScheduler();
  const clock = new SchedulerClock(scheduler);
  const plane = new SimControlPlane({ scheduler, clock, computeNodes: NODES, listeners: [0], detector: { heartbeatIntervalMs: H_MS, missesBeforeSuspect: K }, plugins });
  const heard = new Map<number, number[]>();
  for (const node of [0, ...NODES]) plane.failuresOf(node).onComputeNodeFailed((dead) => heard.set(node, [...(heard.get(node) ?? []), dead]));
  const runUntil = (ms: number) => scheduler.run({ untilNs: ms * NS_PER_MS });
  return { scheduler, clock, plane, heard, runUntil };
}

describe('the coordinator control plane in sim (libs/control over the in-memory bus)', () => {
  it('a killed node stops heartbeating; the real detector declares it dead within the suspicion timeout and every other node hears it', async () => {
    const { plane, heard, runUntil } = cluster();
    await runUntil(10);
    expect(plane.plane?.membership.detector.members().map((m) => `${m.node}:${m.state}`)).toStrictEqual(['1:alive', '2:alive', '3:alive']);
    plane.kill(3);
    const heardAt = plane.firstHeard(3);
    await runUntil(20);
    const atNs = await heardAt;
    // silence since the last heartbeat (at most one interval before the kill) reaches k·H, then one tick and the bus
    expect(atNs - 10 * NS_PER_MS).toBeGreaterThanOrEqual((K - 1) * H_MS * NS_PER_MS);
    expect(atNs - 10 * NS_PER_MS).toBeLessThanOrEqual((K * H_MS + H_MS / 4) * NS_PER_MS + 100_000);
    expect(plane.plane?.membership.detector.member('compute', '3')?.state).toBe('dead');
    expect(plane.plane?.recoveries.all().map((r) => `${r.role}/${r.id}`)).toStrictEqual(['compute/3']);
    for (const node of [0, 1, 2]) expect(new Set(heard.get(node)), `node ${node}`).toStrictEqual(new Set([3]));
    expect(heard.get(3)).toBeUndefined();
    expect(plane.malformed.count()).toBe(0);
    plane.close();
  });

  it('a node that dies while the coordinator is down is declared dead by the restarted one, which recalls the members its predecessor published', async () => {
    const { plane, heard, runUntil } = cluster();
    await runUntil(10);
    plane.crashCoordinator();
    plane.kill(3);
    await runUntil(15);
    expect(heard.get(1)).toBeUndefined(); // nobody detects anything while no coordinator runs
    plane.restartCoordinator();
    await runUntil(25);
    expect(plane.lives.map((l) => [l.startedAtNs / NS_PER_MS, l.crashedAtNs === undefined ? undefined : l.crashedAtNs / NS_PER_MS])).toStrictEqual([
      [0, 10],
      [15, undefined],
    ]);
    // the new instance never heard 3, but a survivor's newest view listed it: silent for one timeout
    // after the restart, it is declared dead (the view, then the notice) and its recovery runs
    expect(plane.plane?.membership.detector.members().map((m) => `${m.node}:${m.state}`)).toStrictEqual(['1:alive', '2:alive', '3:dead']);
    expect(plane.plane?.recoveries.all().map((r) => `${r.role}/${r.id}@${r.detectedAtNs / NS_PER_MS}`)).toStrictEqual([`compute/3@${15 + K * H_MS}`]);
    expect(new Set(heard.get(1))).toStrictEqual(new Set([3]));
    expect(new Set(heard.get(0))).toStrictEqual(new Set([3]));
    // its epochs continue above the crashed one's
    expect(plane.plane!.membership.view!.epoch).toBeGreaterThan(0n);
    plane.close();
  });

  it('starts every plug-in it is given: node parts closed when their node dies, a switch member that heartbeats, drivers anew per coordinator life, counts merged', async () => {
    const log: string[] = [];
    const plugin = (name: string, withSwitch: boolean): InProcessControlPlugin => ({
      computeNode: ({ node }) => (log.push(`${name} node ${node}`), { close: () => void log.push(`${name} close ${node}`) }),
      ...(withSwitch ? { switchMember: () => void log.push(`${name} switch`), announcesSwitch: true } : {}),
      coordinator: () => ({
        recoveryDrivers: [
          () => ({
            switchJoined: (m) => void log.push(`${name} joined ${m.id}`),
            computeDead: (m) => void log.push(`${name} dead ${m.node}`),
            close: () => void log.push(`${name} driver closed`),
          }),
        ],
      }),
      counts: () => ({ [name]: log.filter((l) => l.startsWith(`${name} dead`)).length }),
    });
    const { plane, runUntil } = cluster([plugin('a', true), plugin('b', false)]);
    expect(log.slice(0, 7)).toStrictEqual(['a node 1', 'b node 1', 'a node 2', 'b node 2', 'a node 3', 'b node 3', 'a switch']);
    await runUntil(10);
    // the switch heartbeats as a member: every driver hears it join
    expect(log.filter((l) => l.includes('joined'))).toStrictEqual(['a joined switch-0', 'b joined switch-0']);
    plane.kill(3);
    await runUntil(20);
    expect(log).toContain('a close 3');
    expect(log).toContain('b close 3');
    expect(plane.counts).toStrictEqual({ a: 1, b: 1 });
    plane.crashCoordinator();
    expect(log.filter((l) => l.endsWith('driver closed'))).toStrictEqual(['a driver closed', 'b driver closed']);
    plane.restartCoordinator();
    await runUntil(30);
    plane.close();
    expect(log.filter((l) => l.endsWith('driver closed'))).toHaveLength(4);
  });
});
