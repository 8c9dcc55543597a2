import { describe, expect, it } from 'vitest';
import type { Clock } from '@lockfabric/ports';
import { RecoveryHold } from '../src/recovery/recovery-hold.js';

/** A clock whose sleeps end when the test says so. */
function manualClock(): Clock & { fire(): void } {
  const due: (() => void)[] = [];
  return {
    nowNs: () => 0,
    sleep: () => new Promise<void>((resolve) => void due.push(resolve)),
    fire: () => due.splice(0).forEach((r) => r()),
  };
}

const settled = async <T>(p: Promise<T>): Promise<string> => {
  const tag = await Promise.race([p.then(() => 'resolved', (e: unknown) => `rejected:${String(e)}`), new Promise<string>((r) => setTimeout(() => r('pending'), 10))]);
  return tag;
};

describe('RecoveryHold: clients hold still from the pause to S2', () => {
  it('a sleep that ends while closed returns only when opened; open, it is the plain sleep', async () => {
    const base = manualClock();
    const hold = new RecoveryHold();
    const clock = hold.clock(base);
    const open = clock.sleep(5);
    base.fire();
    expect(await settled(open)).toBe('resolved');
    hold.close();
    const held = clock.sleep(5);
    base.fire();
    expect(await settled(held)).toBe('pending');
    hold.open();
    expect(await settled(held)).toBe('resolved');
  });

  it('waiting is abortable: the signal rejects the wait and leaves no waiter behind', async () => {
    const hold = new RecoveryHold();
    hold.close();
    const controller = new AbortController();
    const waiting = hold.whenOpen(controller.signal);
    controller.abort('gone');
    expect(await settled(waiting)).toBe('rejected:gone');
    const aborted = new AbortController();
    aborted.abort('already');
    expect(await settled(hold.whenOpen(aborted.signal))).toBe('rejected:already');
    hold.open();
    expect(hold.closed).toBe(false);
    expect(await settled(hold.whenOpen())).toBe('resolved');
  });
});
