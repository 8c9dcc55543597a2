import type { LockPacket } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { Switch, expandEgress } from '@lockfabric/switch';
import { lockCapacity, mausNeeded } from './capacity.js';
import { INCA_BOUND, fissLockDecider } from './decider.js';
import type { FissLockDeciderOptions } from './decider.js';
import { ConfigError } from '@lockfabric/ports';
import type { PacketType } from '@lockfabric/ports';
import { FLAG_ABORT, FLAG_BOUNCED, FLAG_CUR_SHARED, FLAG_DUP, FLAG_FALLBACK, FLAG_GRANTABLE, FLAG_GRANTED, FLAG_HAS_AGENT, FLAG_INVALID, ackStatusOf, taskKey } from '../wire.js';

function setup(options: FissLockDeciderOptions = {}) {
  const program = fissLockDecider({ lockCount: 64, ...options });
  const sw = new Switch(program);
  const seqs = new Map<number, number>();
  const send = (from: number, fields: Partial<LockPacket> & Pick<LockPacket, 'type'>, seq?: number) => {
    const next = seq ?? (seqs.get(from) ?? 0) + 1;
    if (seq === undefined) seqs.set(from, next);
    const packet: LockPacket = { lock: 3, machine: from, task: taskKey(1, 1), mode: 'exclusive', incarnation: 0, seq: next, flags: 0, agent: from, ...fields };
    return expandEgress(sw.ingest(packet, from), from).map((c) => ({ to: c.machine, type: c.packet.type, flags: c.packet.flags, packet: c.packet }));
  };
  return { program, sw, send };
}

describe('fisslock decider', () => {
  it('① grants a free lock with an empty agent and records mode and mid', () => {
    const { program, send } = setup();
    const out = send(1, { type: 'acquire', mode: 'shared' });
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ to: 1, type: 'grant', flags: FLAG_HAS_AGENT });
    expect(program.meta(3)).toEqual({ free: false, mode: 'shared', mid: 1, inca: 0, pref: false });
  });

  it('② grants shared at once and multicasts a GRANTED copy to the agent; inca counts it', () => {
    const { program, send } = setup();
    send(1, { type: 'acquire', mode: 'shared' });
    const out = send(2, { type: 'acquire', mode: 'shared' });
    expect(out.map((c) => [c.to, c.type, c.flags & FLAG_GRANTED])).toEqual([
      [1, 'acquire', FLAG_GRANTED],
      [2, 'grant', 0],
    ]);
    expect(program.meta(3).inca).toBe(1);
    // the GRANT and its copy name the grant's home: the mid register (agent machine + 1), echoed
    // in the RELEASE; an agent elsewhere never counts the copy (agent-state.ts foreignCopy)
    expect(out[1]?.packet.incarnation).toBe(1 + 1);
    expect(out[0]?.packet.incarnation).toBe(1 + 1);
  });

  it('inca bound: ② only while inca < 127; past it a shared ACQUIRE is forwarded (③) and counted; an accepted transfer starts again at 0', () => {
    const { program, sw, send } = setup();
    send(1, { type: 'acquire', mode: 'shared' });
    for (let k = 0; k < INCA_BOUND; k++) expect(send(2, { type: 'acquire', mode: 'shared', task: taskKey(2, k + 1) })).toHaveLength(2);
    expect(program.meta(3).inca).toBe(127);
    const out = send(2, { type: 'acquire', mode: 'shared', task: taskKey(2, 500) });
    expect(out.map((c) => [c.to, c.type, c.flags])).toEqual([[1, 'acquire', 0]]);
    expect(program.meta(3).inca).toBe(127);
    expect(sw.counters().decisions['inca-bound-queued']).toBe(1);
    // the agent counted all 127 and hands the lock to the queued shared run: a new lifetime
    send(1, { type: 'grant', mode: 'shared', machine: 2, task: taskKey(2, 500), incarnation: 127, flags: FLAG_HAS_AGENT | FLAG_CUR_SHARED });
    expect(program.meta(3)).toMatchObject({ mode: 'shared', mid: 2, inca: 0 });
    expect(send(3, { type: 'acquire', mode: 'shared', task: taskKey(3, 1) })).toHaveLength(2);
  });

  it('mutantNoIncaBound: ② goes on past 127 and inca wraps, where a refused transfer 128 steps behind is no longer re-refused', () => {
    const { program, sw, send } = setup({ mutantNoIncaBound: true });
    send(1, { type: 'acquire', mode: 'shared' });
    // the agent sends its transfer at inca 0 and it is refused after the first ② grant
    send(2, { type: 'acquire', mode: 'shared', task: taskKey(2, 1) });
    const transfer = { type: 'grant' as const, mode: 'exclusive' as const, machine: 3, task: taskKey(3, 1), incarnation: 0, flags: FLAG_HAS_AGENT | FLAG_CUR_SHARED };
    expect(send(1, transfer).map((c) => [c.to, c.flags & FLAG_INVALID])).toEqual([[1, FLAG_INVALID]]);
    const seq = 1 + 1; // machine 1's second packet
    for (let k = 1; k < 128; k++) send(2, { type: 'acquire', mode: 'shared', task: taskKey(2, k + 1) });
    expect(program.meta(3).inca).toBe(128);
    // the resend lies 128 steps behind: taken as settled and routed to the grantee (the aliasing)
    expect(send(1, transfer, seq).map((c) => [c.to, c.type])).toEqual([[3, 'grant']]);
    expect(sw.counters().decisions['dup-transfer-past-window']).toBe(1);
    expect(sw.counters().decisions['inca-bound-queued']).toBeUndefined();
  });

  it('inca bound: the same refused transfer, resent after 128 more shared ACQUIREs, is still re-refused', () => {
    const { program, send } = setup();
    send(1, { type: 'acquire', mode: 'shared' });
    send(2, { type: 'acquire', mode: 'shared', task: taskKey(2, 1) });
    const transfer = { type: 'grant' as const, mode: 'exclusive' as const, machine: 3, task: taskKey(3, 1), incarnation: 0, flags: FLAG_HAS_AGENT | FLAG_CUR_SHARED };
    expect(send(1, transfer).map((c) => [c.to, c.flags & FLAG_INVALID])).toEqual([[1, FLAG_INVALID]]);
    for (let k = 1; k < 128; k++) send(2, { type: 'acquire', mode: 'shared', task: taskKey(2, k + 1) });
    expect(program.meta(3).inca).toBe(INCA_BOUND);
    expect(send(1, transfer, 2).map((c) => [c.to, c.type, c.flags & FLAG_INVALID])).toEqual([[1, 'grant', FLAG_INVALID]]);
  });

  it('③ forwards an incompatible ACQUIRE to the agent without state change', () => {
    const { program, send } = setup();
    send(1, { type: 'acquire', mode: 'shared' });
    const out = send(2, { type: 'acquire', mode: 'exclusive' });
    expect(out.map((c) => [c.to, c.type, c.flags])).toEqual([[1, 'acquire', 0]]);
    expect(program.meta(3)).toMatchObject({ free: false, mode: 'shared', mid: 1, inca: 0 });
  });

  it('⑦ an accepted FREE frees the lock and is echoed as an ACK; ⑨ RELEASE is routed to the agent', () => {
    const { program, send } = setup();
    send(1, { type: 'acquire', mode: 'exclusive' });
    expect(send(2, { type: 'release' }).map((c) => [c.to, c.type])).toEqual([[1, 'release']]);
    const out = send(1, { type: 'free', mode: 'exclusive', incarnation: 0 });
    expect(out.map((c) => [c.to, c.type, ackStatusOf(c.flags)])).toEqual([[1, 'ack', 'freed']]);
    expect(program.meta(3)).toEqual({ free: true, mode: 'exclusive', mid: undefined, inca: 0, pref: false });
  });

  it('a bounced ② copy reaching a free lock is ACKed to its bouncer as a duplicate (the old rule, a mutant, drops it unanswered)', () => {
    for (const mutantSilentStaleCopy of [false, true]) {
      const { program, send } = setup({ mutantSilentStaleCopy });
      // machine 2 bounced the copy of its own ② grant; its agent's FREE (inca 1: the copy written off) was accepted
      send(1, { type: 'acquire', mode: 'shared' });
      send(2, { type: 'acquire', mode: 'shared', task: taskKey(2, 7) });
      send(1, { type: 'free', mode: 'shared', incarnation: 1 });
      expect(program.meta(3).free).toBe(true);
      const out = send(2, { type: 'acquire', mode: 'shared', task: taskKey(2, 7), flags: FLAG_GRANTED | FLAG_BOUNCED });
      if (mutantSilentStaleCopy) expect(out).toEqual([]);
      else expect(out.map((c) => [c.to, c.type, ackStatusOf(c.flags)])).toEqual([[2, 'ack', 'duplicate']]);
      expect(program.meta(3)).toMatchObject({ free: true, mid: undefined, inca: 0 });
    }
  });

  it('⑧ a transfer GRANT with matching inca moves mode and mid; a stale inca is refused back to the agent', () => {
    const { program, send } = setup();
    send(1, { type: 'acquire', mode: 'shared' });
    send(2, { type: 'acquire', mode: 'shared' }); // ② inca 1
    const refused = send(1, { type: 'grant', machine: 3, mode: 'exclusive', incarnation: 0, flags: FLAG_HAS_AGENT | FLAG_CUR_SHARED });
    expect(refused.map((c) => [c.to, c.type, c.flags & FLAG_INVALID])).toEqual([[1, 'grant', FLAG_INVALID]]);
    expect(program.meta(3)).toMatchObject({ mode: 'shared', mid: 1, inca: 1 });
    const accepted = send(1, { type: 'grant', machine: 3, mode: 'exclusive', incarnation: 1, flags: FLAG_HAS_AGENT | FLAG_CUR_SHARED });
    expect(accepted.map((c) => [c.to, c.type])).toEqual([[3, 'grant']]);
    expect(program.meta(3)).toMatchObject({ free: false, mode: 'exclusive', mid: 3, inca: 0 });
  });

  it('mutant without the incarnation check accepts a stale FREE', () => {
    const { program, send } = setup({ mutantNoIncarnationCheck: true });
    send(1, { type: 'acquire', mode: 'shared' });
    send(2, { type: 'acquire', mode: 'shared' });
    send(1, { type: 'free', mode: 'shared', incarnation: 0 });
    expect(program.meta(3).free).toBe(true);
  });

  it('duplicates never change registers; a gap is dropped until the retransmission', () => {
    const { program, sw, send } = setup();
    send(1, { type: 'acquire', mode: 'exclusive' }, 1);
    send(1, { type: 'free', mode: 'exclusive' }, 2);
    const again = send(1, { type: 'acquire', mode: 'exclusive' }, 1);
    expect(again.map((c) => [c.type, ackStatusOf(c.flags)])).toEqual([['ack', 'duplicate']]);
    expect(program.meta(3).free).toBe(true);
    expect(send(1, { type: 'acquire', mode: 'exclusive' }, 5)).toEqual([]);
    expect(sw.counters().decisions['seq-gap']).toBe(1);
    expect(program.meta(3).free).toBe(true);
  });

  it('a duplicate ACQUIRE is only routed, marked GRANTABLE only while a ② grant would be made now (held shared, no reader block, under the bound)', () => {
    const routed = (out: ReturnType<ReturnType<typeof setup>['send']>) => out.map((c) => [c.to, c.type, c.flags & (FLAG_DUP | FLAG_GRANTABLE | FLAG_GRANTED)]);
    const a = setup({ policy: 'starvation-prevention' });
    a.send(1, { type: 'acquire', mode: 'shared' });
    a.send(2, { type: 'acquire', mode: 'shared', task: taskKey(2, 1) }, 1);
    expect(routed(a.send(2, { type: 'acquire', mode: 'shared', task: taskKey(2, 1) }, 1))).toEqual([[1, 'acquire', FLAG_DUP | FLAG_GRANTABLE]]);
    // a writer's duplicate, and any duplicate once the reader block is set, is not grantable
    expect(routed(a.send(2, { type: 'acquire', mode: 'exclusive', task: taskKey(2, 1) }, 1))).toEqual([[1, 'acquire', FLAG_DUP]]);
    a.send(1, { type: 'notify' });
    expect(routed(a.send(2, { type: 'acquire', mode: 'shared', task: taskKey(2, 1) }, 1))).toEqual([[1, 'acquire', FLAG_DUP]]);
    expect(a.program.meta(3)).toMatchObject({ mode: 'shared', mid: 1, inca: 1 });
    // held exclusive: routed plain; a stale GRANTABLE bit a bounced copy still carries is cleared
    const b = setup();
    b.send(1, { type: 'acquire', mode: 'exclusive' });
    b.send(2, { type: 'acquire', mode: 'shared', task: taskKey(2, 1) }, 1);
    expect(routed(b.send(2, { type: 'acquire', mode: 'shared', task: taskKey(2, 1), flags: FLAG_DUP | FLAG_GRANTABLE }, 2))).toEqual([[1, 'acquire', FLAG_DUP]]);
    // at the incarnation bound a new shared ACQUIRE is forwarded (③), so its duplicate is not grantable
    const c = setup();
    c.send(1, { type: 'acquire', mode: 'shared' });
    for (let k = 0; k < INCA_BOUND; k++) c.send(2, { type: 'acquire', mode: 'shared', task: taskKey(2, k + 1) });
    expect(routed(c.send(2, { type: 'acquire', mode: 'shared', task: taskKey(2, 1) }, 1))).toEqual([[1, 'acquire', FLAG_DUP]]);
  });

  it('timeout-free: an aborted, unreached RELEASE from the agent machine frees the lock; after ② grants it builds an empty agent instead', () => {
    const a = setup();
    a.send(1, { type: 'acquire', mode: 'exclusive' });
    const freed = a.send(1, { type: 'release', flags: FLAG_ABORT });
    expect(freed.map((c) => [c.type, ackStatusOf(c.flags)])).toEqual([['ack', 'freed']]);
    expect(a.program.meta(3).free).toBe(true);
    const b = setup();
    b.send(1, { type: 'acquire', mode: 'shared' });
    b.send(2, { type: 'acquire', mode: 'shared' });
    const refused = b.send(1, { type: 'release', flags: FLAG_ABORT });
    expect(refused.map((c) => [c.to, c.type, c.flags & FLAG_INVALID, c.packet.mode])).toEqual([[1, 'free', FLAG_INVALID, 'shared']]);
    expect(b.program.meta(3)).toMatchObject({ free: false, mid: 1, inca: 1 });
  });

  it('starvation bit: set by STARVE, blocks ② grants, cleared by an accepted FREE', () => {
    const { program, send } = setup({ policy: 'starvation-prevention' });
    send(1, { type: 'acquire', mode: 'shared' });
    send(1, { type: 'notify' });
    expect(program.meta(3).pref).toBe(true);
    expect(send(2, { type: 'acquire', mode: 'shared' }).map((c) => [c.to, c.type, c.flags])).toEqual([[1, 'acquire', 0]]);
    send(1, { type: 'free', mode: 'shared', incarnation: 0 });
    expect(program.meta(3)).toMatchObject({ free: true, pref: false });
  });

  it('write-preferring: a queued writer sets ww and later readers queue too', () => {
    const { program, send } = setup({ policy: 'write-preferring' });
    send(1, { type: 'acquire', mode: 'shared' });
    send(2, { type: 'acquire', mode: 'exclusive' });
    expect(program.meta(3).pref).toBe(true);
    expect(send(3, { type: 'acquire', mode: 'shared' }).map((c) => [c.to, c.type])).toEqual([[1, 'acquire']]);
  });

  it('out-of-range locks go to the fallback owner untouched', () => {
    const { sw, send } = setup({ fallbackNodes: [7, 8] });
    const out = send(1, { type: 'acquire', lock: 1000 });
    expect(out).toHaveLength(1);
    expect([7, 8]).toContain(out[0]?.to);
    expect(sw.counters().decisions['fallback-routed']).toBe(1);
  });

  it('capacity follows the MAU formula: 1.68 M locks with 12 MAUs of 560 000 bytes, which is the default switch', () => {
    expect(lockCapacity(12, 560_000 * 8)).toBe(1_680_000);
    expect(mausNeeded(1_680_000, 560_000 * 8)).toBe(12);
    expect(mausNeeded(1_680_001, 560_000 * 8)).toBeGreaterThan(12);
    const program = fissLockDecider();
    new Switch(program);
    expect([program.capacity(), program.lockCount()]).toEqual([1_680_000, 1_680_000]);
    // 560 KiB MAUs (the old default) would hold 1 720 320: ids the client sends to ParLock
    expect(lockCapacity(12, 560 * 1024 * 8)).toBe(1_720_320);
  });

  it('refuses options no switch can run, as a configuration error', () => {
    expect(() => fissLockDecider({ lockCount: 0 })).toThrow(ConfigError);
    expect(() => fissLockDecider({ lockCount: 2.5 })).toThrow(/lockCount must be a positive integer, got 2.5/);
    expect(() => fissLockDecider({ policy: 'fair' as never })).toThrow(/policy must be one of read-preferring, starvation-prevention, write-preferring, got fair/);
    expect(() => fissLockDecider({ fallbackNodes: [1, 255] })).toThrow(/fallbackNodes\[1\] must be a machine id in \[0, 254\], got 255/);
    // above the capacity it is cut to it when built (sim runs past capacity rely on that)
    const program = fissLockDecider({ lockCount: 5_000_000 });
    new Switch(program);
    expect(program.lockCount()).toBe(1_680_000);
  });

  it('an index at or above lockCount without FLAG_FALLBACK touches no register: forwarded to its owner, or dropped and counted with none', () => {
    const { sw } = setup({ lockCount: 64, fallbackNodes: [7, 8] });
    const registers = () => sw.describe().arrays.map((a) => [a.name, [...sw.readRegisters(a.name, 0, a.length)]] as const);
    const before = registers();
    const types: PacketType[] = ['acquire', 'release', 'free', 'grant', 'notify', 'transfer'];
    for (const [k, type] of types.entries()) {
      for (const lock of [64, 65, 1_000_000, 0xffff_ffff]) {
        const p: LockPacket = { type, lock, machine: 1, task: taskKey(1, k), mode: 'shared', incarnation: 3, seq: 1, flags: FLAG_HAS_AGENT, agent: 1 };
        const toOwner = expandEgress(sw.ingest(p, 1), 1);
        expect(toOwner).toHaveLength(1);
        expect([7, 8]).toContain(toOwner[0]?.machine);
        expect(toOwner[0]?.packet).toMatchObject({ type, lock, flags: FLAG_HAS_AGENT | FLAG_FALLBACK });
        const withDst = expandEgress(sw.ingest({ ...p, dst: 5 }, 1), 1);
        expect(withDst.map((c) => [c.machine, c.packet.flags])).toEqual([[5, FLAG_HAS_AGENT]]);
      }
    }
    expect(registers()).toEqual(before);
    expect(sw.counters().decisions['fallback-routed']).toBe(types.length * 4 * 2);
    expect(sw.counters().programErrors).toBe(0);
    // no owner known: the packet is dropped, counted under its reason, still without a register access
    const { sw: bare } = setup({ lockCount: 64 });
    expect(bare.ingest({ type: 'acquire', lock: 64, machine: 1, task: 0, mode: 'exclusive', incarnation: 0, seq: 1, flags: 0 }, 1)).toEqual([{ kind: 'drop', reason: 'no-fallback-node' }]);
    expect(bare.counters().dropsByReason).toEqual({ 'no-fallback-node': 1 });
  });

  it('the default switch sends ids in [1.68 M, 1.72 M) to their fallback owner, where the client sends them', () => {
    const program = fissLockDecider();
    const sw = new Switch(program);
    const seqBefore = [...sw.readRegisters('fisslock.seq', 0, 256)];
    for (const lock of [1_680_000, 1_719_999]) {
      const out = expandEgress(sw.ingest({ type: 'acquire', lock, machine: 2, task: 1, mode: 'exclusive', incarnation: 0, seq: 1, flags: 0, dst: 3 }, 2), 2);
      expect(out.map((c) => [c.machine, c.packet.type])).toEqual([[3, 'acquire']]);
    }
    expect(sw.counters().decisions).toEqual({ 'fallback-routed': 2 });
    expect([...sw.readRegisters('fisslock.seq', 0, 256)]).toEqual(seqBefore);
    expect(program.meta(1_679_999)).toEqual({ free: true, mode: 'exclusive', mid: undefined, inca: 0, pref: false });
  });

  it('register memory for one million locks is reported by the switch and is at most 2.3 MB', () => {
    const sw = new Switch(fissLockDecider({ lockCount: 1_000_000 }));
    const { registerBytes, arrays } = sw.describe();
    expect(registerBytes).toBeLessThanOrEqual(2_300_000);
    expect(registerBytes).toBe(2_250_000 + 1024); // 18 bits per lock + 256 32-bit sequence numbers
    expect(arrays.filter((a) => a.name.startsWith('fisslock.mid')).map((a) => a.stage)).toEqual([7, 8, 9]);
    const withBit = new Switch(fissLockDecider({ lockCount: 1_000_000, policy: 'starvation-prevention' }));
    expect(withBit.describe().registerBytes).toBeLessThanOrEqual(2.3 * 1024 * 1024);
  });
});

describe('fisslock decider: lost refusals (spec §13.1)', () => {
  it('a retransmitted FREE whose refusal was lost is refused again, not echoed as freed', () => {
    const { program, send } = setup();
    send(1, { type: 'acquire', mode: 'shared' });
    send(2, { type: 'acquire', mode: 'shared' }); // ② inca 1, the copy is still on its way
    const first = send(1, { type: 'free', mode: 'shared', incarnation: 0 });
    expect(first.map((c) => [c.to, c.type, c.flags & FLAG_INVALID])).toEqual([[1, 'free', FLAG_INVALID]]);
    const seq = first[0]!.packet.seq;
    const again = send(1, { type: 'free', mode: 'shared', incarnation: 0 }, seq);
    expect(again.map((c) => [c.to, c.type, c.flags & FLAG_INVALID])).toEqual([[1, 'free', FLAG_INVALID]]);
    expect(program.meta(3)).toMatchObject({ free: false, mode: 'shared', mid: 1, inca: 1 });
  });

  it('a retransmitted FREE whose first copy was accepted is echoed as freed', () => {
    const { send } = setup();
    send(1, { type: 'acquire', mode: 'shared' });
    const first = send(1, { type: 'free', mode: 'shared', incarnation: 0 });
    const again = send(1, { type: 'free', mode: 'shared', incarnation: 0 }, first[0]!.packet.seq);
    expect(again.map((c) => [c.to, c.type, ackStatusOf(c.flags)])).toEqual([[1, 'ack', 'freed']]);
  });

  it('a retransmitted transfer GRANT whose refusal was lost is refused again; an accepted one is forwarded as a duplicate', () => {
    const { program, send } = setup();
    send(1, { type: 'acquire', mode: 'shared' });
    send(2, { type: 'acquire', mode: 'shared' });
    const transfer = { type: 'grant' as const, machine: 3, mode: 'exclusive' as const, incarnation: 0, flags: FLAG_HAS_AGENT | FLAG_CUR_SHARED };
    const first = send(1, transfer);
    expect(first.map((c) => [c.to, c.flags & FLAG_INVALID])).toEqual([[1, FLAG_INVALID]]);
    expect(send(1, transfer, first[0]!.packet.seq).map((c) => [c.to, c.flags & FLAG_INVALID])).toEqual([[1, FLAG_INVALID]]);
    // the agent counted the ② copy: the transfer is accepted, and its retransmission only goes on to the grantee
    const accepted = send(1, { ...transfer, incarnation: 1 });
    expect(accepted.map((c) => [c.to, c.flags & FLAG_INVALID])).toEqual([[3, 0]]);
    expect(send(1, { ...transfer, incarnation: 1 }, accepted[0]!.packet.seq).map((c) => [c.to, c.flags & FLAG_INVALID])).toEqual([[3, 0]]);
    expect(program.meta(3)).toMatchObject({ free: false, mode: 'exclusive', mid: 3, inca: 0 });
  });

  it('an accepted transfer GRANT resent after the lock came back to its sender shared is not refused (its incarnation matches)', () => {
    const { program, send } = setup();
    send(1, { type: 'acquire', mode: 'shared' });
    const toTwo = { type: 'grant' as const, machine: 2, mode: 'shared' as const, incarnation: 0, flags: FLAG_HAS_AGENT | FLAG_CUR_SHARED };
    const first = send(1, toTwo);
    expect(first.map((c) => [c.to, c.flags & FLAG_INVALID])).toEqual([[2, 0]]);
    // the grantee's ACK is lost; meanwhile the lock is used on machine 2 and handed back to machine 1
    send(2, { type: 'grant', machine: 1, mode: 'shared', incarnation: 0, flags: FLAG_HAS_AGENT | FLAG_CUR_SHARED });
    expect(program.meta(3)).toMatchObject({ free: false, mode: 'shared', mid: 1, inca: 0 });
    // mid and mode alone look like a standing refusal; a refusal would make machine 1 restore its old agent
    const resent = send(1, toTwo, first[0]!.packet.seq);
    expect(resent.map((c) => [c.to, c.flags & FLAG_INVALID])).toEqual([[2, 0]]);
    expect(program.meta(3)).toMatchObject({ free: false, mode: 'shared', mid: 1, inca: 0 });
  });

  it('an accepted self-transfer (agent and grantee on one machine) with a nonzero incarnation, resent after its GRANT was lost, is not refused', () => {
    const { program, send } = setup();
    send(1, { type: 'acquire', mode: 'shared' });
    send(2, { type: 'acquire', mode: 'shared' });
    send(2, { type: 'acquire', mode: 'shared', task: taskKey(2, 2) }); // two ② grants: inca 2
    const toSelf = { type: 'grant' as const, machine: 1, mode: 'shared' as const, incarnation: 2, flags: FLAG_HAS_AGENT | FLAG_CUR_SHARED };
    const first = send(1, toSelf);
    expect(first.map((c) => [c.to, c.flags & FLAG_INVALID])).toEqual([[1, 0]]);
    // mid and mode are unchanged, inca is reset: only "inca differs" would look like a standing refusal,
    // and the sender would rebuild its agent two ② grants ahead of the decider (fisslock sweep, seed 31)
    expect(program.meta(3)).toMatchObject({ free: false, mode: 'shared', mid: 1, inca: 0 });
    const resent = send(1, toSelf, first[0]!.packet.seq);
    expect(resent.map((c) => [c.to, c.flags & FLAG_INVALID])).toEqual([[1, 0]]);
    expect(program.meta(3)).toMatchObject({ free: false, mode: 'shared', mid: 1, inca: 0 });
  });
});
