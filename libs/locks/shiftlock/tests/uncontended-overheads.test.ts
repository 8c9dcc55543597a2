import { describe, expect, it } from 'vitest';
import type { ClientPorts, Clock, Mailbox } from '@lockfabric/ports';
import { ShiftLockClient, readShiftLockOptions } from '../src/index.js';
import { scripted } from './support/scripted.js';

/**
 * What an uncontended writer cycle costs besides its two masked CAS (docs/performance-live.md,
 * ShiftLock): clock reads and mailbox looks. On live each clock read is a BigInt hrtime read and
 * each look a trip through the NATS mailbox hub, on a path where caslock does neither.
 */
describe('shiftlock: uncontended writer cycle, beyond its verbs', () => {
  const CYCLES = 5;

  function counted() {
    const s = scripted();
    const base = s.cluster.clientPorts({ node: s.cluster.computeNodeIds[0]!, client: 0 });
    const counts = { clockReads: 0 };
    const looks: { deadlineNs: number | undefined; atNs: number }[] = [];
    const clock: Clock = {
      nowNs: () => {
        counts.clockReads++;
        return base.clock.nowNs();
      },
      sleep: (ns, signal) => base.clock.sleep(ns, signal),
    };
    const mailbox: Mailbox = {
      self: base.mailbox.self,
      send: (message) => base.mailbox.send(message),
      receive: (match, options) => {
        looks.push({ deadlineNs: options?.deadlineNs, atNs: base.clock.nowNs() });
        return base.mailbox.receive(match, options);
      },
    };
    const ports: ClientPorts = { ...base, clock, mailbox };
    return { s, client: new ShiftLockClient(ports, readShiftLockOptions({})), counts, looks };
  }

  it('reads the clock 6 times per acquire+release (one read serves each look), and never waits on the mailbox', async () => {
    const { s, client, counts, looks } = counted();
    for (let i = 0; i < CYCLES; i++) {
      const grant = await s.run(client.acquire(1, 'exclusive'));
      await s.run(client.release(grant));
    }
    expect(s.verbs()).toEqual({ 'masked-cas': 2 * CYCLES });
    // Span start and end, the acquire deadline, the enqueue's issue time, the lease check of the
    // grant and the release's lease check; before: 8, the two looks reading it again for a deadline.
    expect(counts.clockReads / CYCLES).toBe(6);
    // One look per acquire (stale messages of the endpoint) and one per release (a successor).
    expect(looks).toHaveLength(2 * CYCLES);
    for (const look of looks) {
      expect(look.deadlineNs).toBeDefined();
      expect(look.deadlineNs!).toBeLessThanOrEqual(look.atNs);
    }
    expect(client.stats).toMatchObject({ staleMessages: 0, droppedLocks: 0, restarts: 0 });
  });
});
