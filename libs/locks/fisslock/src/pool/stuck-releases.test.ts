import type { LockPacket } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { StuckReleases, WRITTEN_OFF_MAX } from './stuck-releases.js';

const copy = (lock: number, task: number): LockPacket => ({ type: 'grant', lock, machine: 1, task, mode: 'shared', incarnation: 0, seq: 0, flags: 0 });

describe('StuckReleases: written-off ② copies', () => {
  it('a written-off copy counts nothing once, then is forgotten', () => {
    const stuck = new StuckReleases(1_000);
    stuck.writeOff(copy(4, 2));
    expect(stuck.takeWrittenOff(copy(4, 2))).toBe(true);
    expect(stuck.takeWrittenOff(copy(4, 2))).toBe(false);
    expect(stuck.takeWrittenOff(copy(4, 3))).toBe(false);
  });

  it('copies that never arrive are remembered up to WRITTEN_OFF_MAX, the oldest forgotten first', () => {
    const stuck = new StuckReleases(1_000);
    for (let lock = 0; lock < WRITTEN_OFF_MAX + 10; lock++) stuck.writeOff(copy(lock, 1));
    expect(stuck.writtenOffKept).toBe(WRITTEN_OFF_MAX);
    expect(stuck.takeWrittenOff(copy(0, 1))).toBe(false);
    expect(stuck.takeWrittenOff(copy(WRITTEN_OFF_MAX + 9, 1))).toBe(true);
  });
});
