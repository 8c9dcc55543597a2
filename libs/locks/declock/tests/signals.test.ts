import { describe, expect, it } from 'vitest';
import { CnSignals, epochAfter, grantMessage, resetAckMessage, resetMessage } from '../src/index.js';
import type { Message } from '@lockfabric/ports';

const me = { node: 1, client: 4 };
const from = { node: 2, client: 0 };
const deliver = (signals: CnSignals, message: Omit<Message, 'from'>) => signals.deliver({ ...message, from });

describe('grant fencing by reset epoch (§2.4, §3.5 "expired notifications")', () => {
  it('a grant reaches only the wait of its exact lock, epoch and position', async () => {
    const signals = new CnSignals(1, 28);
    const wait = signals.register(me.client, 7, 0, 3);
    deliver(signals, grantMessage(me, { lock: 7, epoch: 1, pos: 3, remoteTs: undefined, trace: undefined })); // another epoch
    deliver(signals, grantMessage(me, { lock: 7, epoch: 0, pos: 4, remoteTs: undefined, trace: undefined })); // another position
    expect(signals.staleGrants).toBe(2);
    deliver(signals, grantMessage(me, { lock: 7, epoch: 0, pos: 3, remoteTs: 0x1234, trace: undefined }));
    expect(await wait.done).toEqual({ kind: 'grant', remoteTs: 0x1234, trace: undefined });
  });

  it('a RESET aborts every wait of an older epoch on that lock, and a grant sent before the reset is dropped', async () => {
    const signals = new CnSignals(1, 28);
    const old = signals.register(me.client, 7, 0, 3);
    const otherLock = signals.register(me.client, 8, 0, 3);
    deliver(signals, resetMessage(me, 7, 1, 3));
    expect(await old.done).toEqual({ kind: 'reset' });
    expect(signals.resetSeen(7, 0)).toBe(true);
    expect(signals.resetSeen(7, 1)).toBe(false);
    // The expired grant arrives late, after the client re-enqueued at the same position in epoch 1.
    const renewed = signals.register(me.client, 7, 1, 3);
    deliver(signals, grantMessage(me, { lock: 7, epoch: 0, pos: 3, remoteTs: undefined, trace: undefined }));
    expect(signals.staleGrants).toBe(1);
    // A duplicate, delayed RESET of the same epoch does not abort the new wait either.
    deliver(signals, resetMessage(me, 7, 1, 3));
    deliver(signals, grantMessage(me, { lock: 7, epoch: 1, pos: 3, remoteTs: undefined, trace: undefined }));
    expect((await renewed.done).kind).toBe('grant');
    deliver(signals, grantMessage(me, { lock: 8, epoch: 0, pos: 3, remoteTs: undefined, trace: undefined }));
    expect((await otherLock.done).kind).toBe('grant');
  });

  it('a wait registered after its epoch was reset is aborted at once', async () => {
    const signals = new CnSignals(1, 28);
    signals.announce(5, 2);
    expect(await signals.register(me.client, 5, 1, 0).done).toEqual({ kind: 'reset' });
  });

  it('compares epochs on the ring of 2^bits', () => {
    expect(epochAfter(1, 0, 4)).toBe(true);
    expect(epochAfter(0, 15, 4)).toBe(true); // wrapped
    expect(epochAfter(15, 0, 4)).toBe(false);
    expect(epochAfter(3, 3, 4)).toBe(false);
  });
});

describe('RESET_ACK support: gate, memberships, acknowledgements', () => {
  it('a RESET closes the lock’s gate; only a header of the announced epoch (or later) without a reset opens it', () => {
    const signals = new CnSignals(1, 28);
    expect(signals.gateClosed(7)).toBe(false);
    deliver(signals, resetMessage(me, 7, 3, 2));
    expect(signals.gateClosed(7)).toBe(true);
    expect(signals.gateClosed(8)).toBe(false);
    signals.observeHeader(7, 2, 0); // a READ that left before the reset's claim landed
    expect(signals.gateClosed(7)).toBe(true);
    signals.observeHeader(7, 2, 3); // the reset under way
    expect(signals.gateClosed(7)).toBe(true);
    signals.observeHeader(7, 3, 0);
    expect(signals.gateClosed(7)).toBe(false);
  });

  it('counts memberships per lock; whenIdle resolves when the last one ends (leave is idempotent)', async () => {
    const signals = new CnSignals(1, 28);
    const a = signals.join(7);
    const b = signals.join(7);
    let idle = false;
    const waiting = signals.whenIdle(7).then(() => (idle = true));
    a.leave();
    a.leave();
    await Promise.resolve();
    expect(idle).toBe(false);
    expect(signals.membersOf(7)).toBe(1);
    b.leave();
    await waiting;
    expect(idle).toBe(true);
    expect(signals.membersOf(7)).toBe(0);
  });

  it('an ack counts only for the reset of its lock and epoch this node is collecting for', () => {
    const signals = new CnSignals(1, 28);
    const acks = signals.collectAcks(7, 4);
    signals.deliver({ ...resetAckMessage(me, 7, 4), from: { node: 2, client: 4095 } });
    signals.deliver({ ...resetAckMessage(me, 7, 3), from: { node: 3, client: 4095 } }); // an older reset
    signals.deliver({ ...resetAckMessage(me, 8, 4), from: { node: 3, client: 4095 } }); // another lock
    expect([...acks.nodes]).toEqual([2]);
    expect(signals.staleAcks).toBe(2);
    // An ack is not a RESET: it announces nothing.
    expect(signals.gateClosed(7)).toBe(false);
    signals.stopCollecting(acks);
    signals.deliver({ ...resetAckMessage(me, 7, 4), from: { node: 3, client: 4095 } });
    expect(signals.staleAcks).toBe(3);
  });
});

describe('memory-node restarts (§4.6): the node resets its state about the lost table before use', () => {
  // Locks 0..9 on memory node 0, 10.. on memory node 1.
  const memoryNodeOf = (lock: number) => (lock < 10 ? 0 : 1);

  it('a newer incarnation drops reset counters, gates and waits of that memory node only', async () => {
    const signals = new CnSignals(1, 28, memoryNodeOf);
    expect(signals.followTables(new Map([[0, 1], [1, 1]]))).toBe(false);
    deliver(signals, resetMessage(me, 7, 3, 2, 1));
    deliver(signals, resetMessage(me, 17, 3, 2, 1));
    const waiting = signals.register(me.client, 7, 3, 5, 1);
    expect(signals.resetSeen(7, 0) && signals.gateClosed(7)).toBe(true);
    // The restarted table comes back at epoch 0: without the reset, epoch 3's counter would abort every acquire there.
    expect(signals.followTables(new Map([[0, 2], [1, 1]]))).toBe(true);
    expect(await waiting.done).toEqual({ kind: 'table-lost' });
    expect(signals.resetSeen(7, 0) || signals.gateClosed(7)).toBe(false);
    expect(signals.resetSeen(17, 0) && signals.gateClosed(17)).toBe(true);
    // An older client's pins change nothing.
    expect(signals.followTables(new Map([[0, 1]]))).toBe(false);
    expect(signals.tablesLost).toBe(1);
  });

  it('grants, RESETs and acks of another table incarnation are dropped', async () => {
    const signals = new CnSignals(1, 28, memoryNodeOf);
    signals.followTables(new Map([[0, 2]]));
    const wait = signals.register(me.client, 7, 0, 3, 2);
    deliver(signals, grantMessage(me, { lock: 7, epoch: 0, pos: 3, remoteTs: undefined, trace: undefined, tag: 1 })); // the lost table's
    expect(signals.staleGrants).toBe(1);
    deliver(signals, resetMessage(me, 7, 1, 2, 1));
    expect(signals.foreignResets).toBe(1);
    expect(signals.gateClosed(7)).toBe(false);
    const acks = signals.collectAcks(7, 1, 2);
    signals.deliver({ ...resetAckMessage(me, 7, 1, 1), from: { node: 2, client: 4095 } });
    expect([...acks.nodes]).toEqual([]);
    deliver(signals, grantMessage(me, { lock: 7, epoch: 0, pos: 3, remoteTs: undefined, trace: undefined, tag: 2 }));
    expect((await wait.done).kind).toBe('grant');
  });
});
