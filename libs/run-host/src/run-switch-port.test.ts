import type { LockPacket, SwitchPort } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { RunSwitchPort } from './run-switch-port.js';

/** A node's switch link: packets sent, and its handlers (what stays subscribed is the point). */
function link() {
  const handlers = new Set<(packet: LockPacket) => void>();
  const sent: LockPacket[] = [];
  const port: SwitchPort = {
    machine: 4,
    send: (packet) => void sent.push(packet),
    onPacket: (handler) => {
      handlers.add(handler);
      return () => handlers.delete(handler);
    },
  };
  return { port, handlers, sent, deliver: (packet: LockPacket) => handlers.forEach((h) => h(packet)) };
}

const packet: LockPacket = { type: 'grant', lock: 1, machine: 4, task: 0, mode: 'exclusive', incarnation: 0, seq: 1, flags: 0, dst: 4 };

describe("RunSwitchPort: one run's clients on the node's switch link", () => {
  it('passes packets both ways while the run lasts', () => {
    const l = link();
    const run = new RunSwitchPort(l.port);
    const seen: LockPacket[] = [];
    run.onPacket((p) => seen.push(p));
    run.send(packet);
    l.deliver(packet);
    expect(l.sent).toEqual([packet]);
    expect(seen).toEqual([packet]);
    expect(run.machine).toBe(4);
  });

  it("close removes every handler the run's clients registered, and later sends and subscriptions do nothing", () => {
    const l = link();
    const run = new RunSwitchPort(l.port);
    const other = () => undefined;
    l.port.onPacket(other); // the node service's own subscription, not the run's
    run.onPacket(() => undefined);
    const removeSecond = run.onPacket(() => undefined);
    removeSecond();
    removeSecond();
    expect(run.handlers).toBe(1);
    expect(l.handlers.size).toBe(2);
    run.close();
    expect(run.handlers).toBe(0);
    expect([...l.handlers]).toEqual([other]);
    run.send(packet);
    run.onPacket(() => undefined);
    expect(l.sent).toEqual([]);
    expect(l.handlers.size).toBe(1);
  });
});
