import { FabricAccessError } from '@lockfabric/ports';
import type { ClientPorts, Completion, Verbs, WorkRequest } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { VirtualTime } from '../tests/support/virtual-time.js';
import { pausablePorts, pauseApplies } from './pause-injection.js';

const ONE_WAY_NS = 1_000;

/** A NIC with one 8-byte word: every verb lands one way after it is posted and completes one way later. */
function fakeVerbs(time: VirtualTime, landed: number[]): Verbs {
  let word = 0n;
  const post = async (batch: readonly WorkRequest[]): Promise<Completion[]> => {
    await time.clock.sleep(ONE_WAY_NS);
    landed.push(time.clock.nowNs());
    const completions = batch.map((wr): Completion => {
      if (wr.op !== 'faa') return { status: 'unsupported' };
      const old = word;
      word += wr.add;
      return { status: 'ok', value: old };
    });
    await time.clock.sleep(ONE_WAY_NS);
    return completions;
  };
  const faa = async (addr: WorkRequest['addr'], add: bigint) => {
    const [c] = await post([{ op: 'faa', addr, add }]);
    if (c?.status !== 'ok') throw new FabricAccessError(c?.status ?? 'bad-request', 'faa failed');
    return c.value ?? 0n;
  };
  const unsupported = () => Promise.reject(new FabricAccessError('unsupported', 'not in this fake'));
  return { post, faa, read: unsupported, write: unsupported, cas: unsupported, maskedCas: unsupported, maskedFaa: unsupported, isLocal: () => false, cpu: undefined as never };
}

function portsOn(time: VirtualTime, landed: number[]): ClientPorts {
  const self = { node: 2, client: 5 };
  const mailbox = { self, send: () => undefined, receive: () => Promise.resolve(undefined) };
  return { self, clock: time.clock, verbs: fakeVerbs(time, landed), mailbox } as unknown as ClientPorts;
}

const ADDR = { node: 0, region: 0, rkey: 0, offset: 0 };

describe('pausablePorts', () => {
  it('a verb posted more than the send lag before a pause lands on time; its completion is seen when the pause ends', async () => {
    const time = new VirtualTime();
    const landed: number[] = [];
    const ports = pausablePorts(portsOn(time, landed), [{ fromNs: 1_500, toNs: 10_000 }], 200);
    const seenAt = await time.run(ports.verbs.faa(ADDR, 1n).then(() => time.clock.nowNs()));
    expect(landed).toEqual([ONE_WAY_NS]);
    expect(seenAt).toBe(10_000);
  });

  it('a verb posted within the send lag before a pause, or during it, leaves when the pause ends (it lands late)', async () => {
    const time = new VirtualTime();
    const landed: number[] = [];
    const ports = pausablePorts(portsOn(time, landed), [{ fromNs: 100, toNs: 10_000 }], 200);
    const seenAt = await time.run(ports.verbs.post([{ op: 'faa', addr: ADDR, add: 1n }]).then(() => time.clock.nowNs()));
    expect(landed).toEqual([10_000 + ONE_WAY_NS]);
    expect(seenAt).toBe(10_000 + 2 * ONE_WAY_NS);
    const later = new VirtualTime();
    const landedLater: number[] = [];
    const paused = pausablePorts(portsOn(later, landedLater), [{ fromNs: 0, toNs: 5_000 }], 0);
    expect(await later.run(paused.verbs.faa(ADDR, 1n))).toBe(0n);
    expect(landedLater).toEqual([5_000 + ONE_WAY_NS]);
  });

  it('a sleep that ends inside a pause wakes when it ends; clock time is not paused; no window, no wrapping', async () => {
    const time = new VirtualTime();
    const base = portsOn(time, []);
    const ports = pausablePorts(base, [{ fromNs: 500, toNs: 3_000 }, { fromNs: 3_000, toNs: 4_000 }], 0);
    expect(await time.run(ports.clock.sleep(1_000).then(() => ports.clock.nowNs()))).toBe(4_000);
    expect(await time.run(ports.clock.sleep(1_000).then(() => ports.clock.nowNs()))).toBe(5_000);
    expect(pausablePorts(base, [], 100)).toBe(base);
  });

  it('a pause applies to every client of its node, or to the clients it lists', () => {
    expect(pauseApplies({ node: 2, atNs: 0, durationNs: 1 }, { node: 2, client: 7 })).toBe(true);
    expect(pauseApplies({ node: 2, atNs: 0, durationNs: 1 }, { node: 1, client: 7 })).toBe(false);
    expect(pauseApplies({ clients: ['1/7'], atNs: 0, durationNs: 1 }, { node: 1, client: 7 })).toBe(true);
    expect(pauseApplies({ clients: ['1/7'], atNs: 0, durationNs: 1 }, { node: 1, client: 8 })).toBe(false);
  });
});
