import { createInMemoryTelemetry } from '@lockfabric/telemetry';
import { RecoveryStage } from '@lockfabric/wire';
import type { DeciderControl, MachineOrders, ServerReport, FissParticipant } from '@lockfabric/lock-fisslock';
import { describe, expect, it } from 'vitest';
import { RecoveryBook, parseRecoveryDetail, recoveryToWire } from '@lockfabric/control';
import { FissParticipantError, RECOVERY_ATTR, fisslock, runFissRecovery } from '@lockfabric/lock-fisslock';

/** Registers as plain arrays: what S3 wrote is what the test reads. */
function fakeSwitch(lockCount: number): DeciderControl & { regs: Map<string, number[]> } {
  const names = ['fisslock.seq', 'fisslock.free', 'fisslock.rw', 'fisslock.mid', 'fisslock.inca'];
  const regs = new Map(names.map((n) => [n, new Array<number>(n === 'fisslock.seq' ? 256 : lockCount).fill(n === 'fisslock.free' ? 1 : 0)]));
  regs.get('fisslock.seq')![3] = 500; // the failed machine's last accepted seq
  return {
    regs,
    arrays: names,
    readRegister: (a, i) => regs.get(a)![i]!,
    fill: (a, v) => void regs.get(a)!.fill(v),
    write: (a, i, values) => values.forEach((v, k) => (regs.get(a)![i + k] = v)),
  };
}

function participant(report: ServerReport, log: string[], applied: Map<number, MachineOrders>): FissParticipant {
  return {
    machine: report.machine,
    pause: async (epoch) => void log.push(`pause ${report.machine}@${epoch}`),
    report: async () => report,
    apply: async (epoch, orders) => {
      log.push(`apply ${report.machine}@${epoch}`);
      applied.set(report.machine, orders);
    },
  };
}

describe('coordinator FissLock recovery driver', () => {
  it('runs S1, S2, S3 in order, writes held locks only, fences the failed machine, and the book shows per-step timings in Status', async () => {
    // machine 3 failed with the switch; lock 0 held by 1, waited for by 2; lock 1 held by 3 only, waited for by 2
    const reports: ServerReport[] = [
      { machine: 1, agents: [{ lid: 0, machine: 1, mode: 'exclusive', holders: [{ mid: 1, task: 11 }], wqueue: [{ mid: 2, task: 21, mode: 'exclusive' }], state: 'live' }], clients: [{ lid: 0, mid: 1, task: 11, mode: 'exclusive', state: 'granted', startNs: 0 }] },
      { machine: 2, agents: [], clients: [{ lid: 0, mid: 2, task: 21, mode: 'exclusive', state: 'pending', startNs: 5 }, { lid: 1, mid: 2, task: 22, mode: 'shared', state: 'pending', startNs: 6 }] },
    ];
    const log: string[] = [];
    const applied = new Map<number, MachineOrders>();
    const sw = fakeSwitch(4);
    let t = 1_000;
    const run = await runFissRecovery({
      epoch: 7n,
      participants: reports.map((r) => participant(r, log, applied)),
      failed: [3],
      control: sw,
      policy: 'read-preferring',
      nowNs: () => (t += 10),
    });
    expect(run.problems).toEqual([]);
    expect(log).toEqual(['pause 1@7', 'pause 2@7', 'apply 1@7', 'apply 2@7']);
    expect(run.steps.map((s) => s.stage)).toEqual(['S1', 'S2', 'S3']);
    expect(applied.get(2)?.wake).toEqual([{ lid: 1, mid: 2, task: 22, mode: 'shared' }]);
    expect(sw.regs.get('fisslock.free')).toEqual([0, 0, 1, 1]);
    expect(sw.regs.get('fisslock.mid')).toEqual([2, 3, 0, 0]);
    expect(sw.regs.get('fisslock.rw')).toEqual([0, 1, 0, 0]);
    expect(sw.regs.get('fisslock.seq')![3]).toBe((500 - 65_536) >>> 0);

    const book = new RecoveryBook({ protocols: new Map([[fisslock.id, fisslock.recovery]]) });
    book.begin({ role: 'switch', id: 'rack0', node: 200, incarnation: 1n }, 7n, 500);
    book.recordSteps('switch', 'rack0', 'fisslock', run.steps, t);
    const phases = book.all().flatMap(recoveryToWire).filter((p) => p.protocol === 'fisslock');
    const staged = phases.filter((p) => p.stage !== RecoveryStage.UNSPECIFIED);
    expect(staged.map((p) => p.stage)).toEqual([RecoveryStage.S1, RecoveryStage.S2, RecoveryStage.S3]);
    expect(staged.every((p) => Number(parseRecoveryDetail(p.detail)['took_ns']) > 0)).toBe(true);
    expect(phases.find((p) => p.stage === RecoveryStage.UNSPECIFIED)?.done).toBe(true);
  });

  it('emits a `recovery` span whose children are recovery.S1, S2, S3, in order, with epoch, member, held locks, orders and registers', async () => {
    const reports: ServerReport[] = [
      { machine: 1, agents: [{ lid: 0, machine: 1, mode: 'exclusive', holders: [{ mid: 1, task: 11 }], wqueue: [], state: 'live' }], clients: [{ lid: 0, mid: 1, task: 11, mode: 'exclusive', state: 'granted', startNs: 0 }] },
      { machine: 2, agents: [], clients: [{ lid: 1, mid: 2, task: 22, mode: 'shared', state: 'pending', startNs: 6 }] },
    ];
    const telemetry = createInMemoryTelemetry();
    let t = 0;
    await runFissRecovery({
      epoch: 9n,
      participants: reports.map((r) => participant(r, [], new Map())),
      failed: [3],
      control: fakeSwitch(4),
      policy: 'read-preferring',
      nowNs: () => (t += 10),
      trace: telemetry.trace,
      member: 'compute/3',
    });
    const spans = telemetry.spans();
    const root = spans.find((s) => s.name === 'recovery');
    expect(root?.attributes).toMatchObject({ 'lockfabric.protocol': 'fisslock', [RECOVERY_ATTR.epoch]: 9, [RECOVERY_ATTR.member]: 'compute/3', [RECOVERY_ATTR.failed]: '3', [RECOVERY_ATTR.held]: 2, [RECOVERY_ATTR.problems]: 0 });
    const rootId = root?.spanContext().spanId;
    const children = spans.filter((s) => s.parentSpanContext?.spanId === rootId && rootId !== undefined);
    expect(children.map((s) => s.name)).toStrictEqual(['recovery.S1', 'recovery.S2', 'recovery.S3']);
    expect(children.every((s) => s.spanContext().traceId === root?.spanContext().traceId && s.attributes[RECOVERY_ATTR.epoch] === 9)).toBe(true);
    expect(children[0]?.attributes).toMatchObject({ [RECOVERY_ATTR.survivors]: 2, [RECOVERY_ATTR.agents]: 1 });
    expect(children[1]?.attributes).toMatchObject({ [RECOVERY_ATTR.held]: 2, [RECOVERY_ATTR.woken]: 1, [RECOVERY_ATTR.aborted]: 0 });
    expect(children[2]?.attributes[RECOVERY_ATTR.registers]).toBeGreaterThanOrEqual(6);
    await telemetry.shutdown();
  });

  it('a step that fails ends its span and the recovery span with the error', async () => {
    const telemetry = createInMemoryTelemetry();
    const broken: FissParticipant = { machine: 1, pause: async () => true, report: async () => Promise.reject(new Error('no answer')), apply: async () => undefined };
    await expect(runFissRecovery({ epoch: 2n, participants: [broken], failed: [], control: fakeSwitch(2), policy: 'read-preferring', nowNs: () => 0, trace: telemetry.trace })).rejects.toThrow('no answer');
    const byName = new Map(telemetry.spans().map((s) => [s.name, s]));
    expect([...byName.keys()].sort()).toStrictEqual(['recovery', 'recovery.S1']);
    expect(byName.get('recovery.S1')?.status.code).toBe(2); // ERROR
    expect(byName.get('recovery')?.status.code).toBe(2);
    await telemetry.shutdown();
  });
  it('a step waits for every call and names each participant that failed it (the hook declares them dead)', async () => {
    let slowAnswered = false;
    const ok = (machine: number): FissParticipant => ({ machine, pause: async () => true, report: async () => ({ machine, agents: [], clients: [] }), apply: async () => undefined });
    const silent = (machine: number, afterMs: number): FissParticipant => ({
      ...ok(machine),
      report: () => new Promise((_, reject) => setTimeout(() => reject(new Error(`no answer from ${machine}`)), afterMs)),
    });
    const slow: FissParticipant = { ...ok(3), report: () => new Promise((resolve) => setTimeout(() => ((slowAnswered = true), resolve({ machine: 3, agents: [], clients: [] })), 30)) };
    const error = await runFissRecovery({ epoch: 2n, participants: [silent(1, 1), slow, silent(4, 20)], failed: [], control: fakeSwitch(2), policy: 'read-preferring', nowNs: () => 0 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FissParticipantError);
    expect((error as FissParticipantError).stage).toBe('S1');
    expect((error as FissParticipantError).machines).toStrictEqual([1, 4]);
    expect((error as Error).message).toContain('no answer from 4');
    expect(slowAnswered).toBe(true);
  });
});
