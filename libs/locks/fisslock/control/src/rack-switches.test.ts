import { FENCE_WINDOW, runFissRecovery } from '@lockfabric/lock-fisslock';
import type { ServerReport } from '@lockfabric/lock-fisslock';
import { describe, expect, it } from 'vitest';
import { AnnouncedSwitches, MissingRackSwitchError, rackedSwitchControl } from './rack-switches.js';
import type { FissSwitchControl } from '@lockfabric/lock-fisslock';

const LOCKS = 8;

/** One rack's switch control as plain arrays; `lastSeqOf3`: the last seq this switch accepted from machine 3. */
function fakeSwitch(lastSeqOf3: number, open = true): FissSwitchControl & { regs: Map<string, number[]>; closed: boolean } {
  const names = ['fisslock.seq', 'fisslock.free', 'fisslock.rw', 'fisslock.mid', 'fisslock.inca'];
  const regs = new Map(names.map((n) => [n, new Array<number>(n === 'fisslock.seq' ? 256 : LOCKS).fill(n === 'fisslock.free' ? 1 : 0)]));
  regs.get('fisslock.seq')![3] = lastSeqOf3;
  const sw = {
    regs,
    closed: false,
    arrays: names,
    readRegister: (a: string, i: number) => regs.get(a)![i]!,
    fill: (a: string, v: number) => void regs.get(a)!.fill(v),
    write: (a: string, i: number, values: readonly number[]) => values.forEach((v, k) => (regs.get(a)![i + k] = v)),
    load: async () => undefined,
    admission: { open, epoch: open ? 4n : 2n },
    close: () => void (sw.closed = true),
  };
  return sw;
}

describe('multi-rack FissLock recovery (§5.4)', () => {
  it('S3 writes each rack its own held locks, survivors at 0 and the failed machine fenced below what that switch accepted', async () => {
    const rack0 = fakeSwitch(500);
    const rack1 = fakeSwitch(40);
    // machine 1 holds lock 2 (rack 0) and lock 5 (rack 1); machine 3 failed
    const report: ServerReport = {
      machine: 1,
      agents: [
        { lid: 2, machine: 1, mode: 'exclusive', holders: [{ mid: 1, task: 11 }], wqueue: [], state: 'live' },
        { lid: 5, machine: 1, mode: 'shared', holders: [{ mid: 1, task: 12 }], wqueue: [], state: 'live' },
      ],
      clients: [
        { lid: 2, mid: 1, task: 11, mode: 'exclusive', state: 'granted', startNs: 0 },
        { lid: 5, mid: 1, task: 12, mode: 'shared', state: 'granted', startNs: 0 },
      ],
    };
    const run = await runFissRecovery({
      epoch: 7n,
      participants: [{ machine: 1, pause: async () => undefined, report: async () => report, apply: async () => undefined }],
      failed: [3],
      control: rackedSwitchControl([rack0, rack1]),
      policy: 'read-preferring',
      nowNs: () => 0,
    });
    expect(run.problems).toStrictEqual([]);
    const held = (sw: ReturnType<typeof fakeSwitch>) => sw.regs.get('fisslock.free')!.flatMap((f, lid) => (f === 0 ? [lid] : []));
    expect(held(rack0)).toStrictEqual([2]);
    expect(held(rack1)).toStrictEqual([5]);
    expect(rack1.regs.get('fisslock.rw')![5]).toBe(1);
    expect(rack0.regs.get('fisslock.mid')![2]).toBe(2); // mid + 1
    // one fence per switch, each below the last seq that switch accepted from machine 3
    expect(rack0.regs.get('fisslock.seq')![3]).toBe((500 - FENCE_WINDOW) >>> 0);
    expect(rack1.regs.get('fisslock.seq')![3]).toBe((40 - FENCE_WINDOW) >>> 0);
    expect(rack0.regs.get('fisslock.seq')![1]).toBe(0);
    expect(rack1.regs.get('fisslock.seq')![1]).toBe(0);
  });

  it('the racked control is open only when every switch is, and closes all', () => {
    const a = fakeSwitch(0, true);
    const b = fakeSwitch(0, false);
    const both = rackedSwitchControl([a, b]);
    expect(both.admission).toStrictEqual({ open: false, epoch: 2n });
    both.close();
    expect(a.closed && b.closed).toBe(true);
  });

  it('announcements: with two racks, recovery refuses to open until both switches announced', () => {
    const announced = new AnnouncedSwitches(2);
    const factory = () => fakeSwitch(0);
    expect(announced.any).toBe(false);
    expect(announced.record(1, '127.0.0.1:7001')).toBe(true);
    expect(announced.complete).toBe(false);
    expect(() => announced.open(factory)).toThrow(MissingRackSwitchError);
    announced.record(0, '127.0.0.1:7000');
    expect(announced.complete).toBe(true);
    // the racks keep announcing every second, in turn: nothing new to log
    expect(announced.record(1, '127.0.0.1:7001')).toBe(false);
    expect(announced.record(0, '127.0.0.1:7000')).toBe(false);
    const opened: string[] = [];
    const control = announced.open((address) => (opened.push(address), fakeSwitch(0)));
    expect(opened).toStrictEqual(['127.0.0.1:7000', '127.0.0.1:7001']);
    expect('racks' in control && control.racks).toHaveLength(2);
  });

  it('one rack: the latest announcement is the switch, as before racks', () => {
    const announced = new AnnouncedSwitches(1);
    announced.record(0, '127.0.0.1:7000');
    announced.record(0, '127.0.0.1:7002');
    const opened: string[] = [];
    announced.open((address) => (opened.push(address), fakeSwitch(0)));
    expect(opened).toStrictEqual(['127.0.0.1:7002']);
  });
});
