import { create } from '@bufbuild/protobuf';
import { RunRequestSchema, WorkloadSpecSchema } from '@lockfabric/wire';
import type { RunRequest } from '@lockfabric/wire';
import { describe, expect, it } from 'vitest';
import { RunSlot, RunSlotError } from './run-slot.js';
import type { Schedule } from './run-slot.js';

/** A timer driven by the test: `fire()` runs what is due, nothing ever waits on a wall clock. */
class ManualSchedule {
  private readonly pending = new Set<{ action: () => void; delayMs: number }>();
  readonly schedule: Schedule = (action, delayMs) => {
    const entry = { action, delayMs };
    this.pending.add(entry);
    return () => this.pending.delete(entry);
  };
  get armed(): number {
    return this.pending.size;
  }
  fire(): void {
    const due = [...this.pending];
    this.pending.clear();
    for (const entry of due) entry.action();
  }
}

const request = (runId: string, clients = 2, prepared = false): RunRequest =>
  create(RunRequestSchema, { runId, prepared, peers: { 0: 'm:1', 1: 'c:1' }, spec: create(WorkloadSpecSchema, { protocol: 'parlock', clients, locks: 4 }) });

/** A slot whose prepared values are `service:<runId>`; records what was built and discarded. */
function rig(preparedTimeoutMs = 1_000) {
  const timer = new ManualSchedule();
  const built: string[] = [];
  const discarded: string[] = [];
  const dropped: string[] = [];
  const oneShots: boolean[] = [];
  let failNext: Error | undefined;
  let gate: Promise<void> | undefined;
  const slot = new RunSlot<string>({
    node: 7,
    preparedTimeoutMs,
    schedule: timer.schedule,
    prepare: async (r, oneShot) => {
      oneShots.push(oneShot);
      await gate;
      if (failNext) {
        const error = failNext;
        failNext = undefined;
        throw error;
      }
      built.push(r.runId);
      return `service:${r.runId}`;
    },
    discard: (value) => void discarded.push(value),
    onDropped: (runId, reason) => dropped.push(`${runId}: ${reason}`),
  });
  return {
    slot,
    timer,
    built,
    discarded,
    dropped,
    oneShots,
    failNextPrepare: (error: Error) => (failNext = error),
    holdPrepare: () => {
      let release!: () => void;
      gate = new Promise<void>((resolve) => (release = resolve));
      return () => {
        gate = undefined;
        release();
      };
    },
  };
}

const codeOf = async (promise: Promise<unknown>): Promise<string> => {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    return error instanceof RunSlotError ? error.code : `other: ${String(error)}`;
  }
};

describe('RunSlot: the two-phase start of one compute node', () => {
  it('prepares, then starts the prepared run with the same request, then is idle again', async () => {
    const { slot, built, timer, oneShots } = rig();
    expect(await slot.prepare(request('a', 2, true))).toEqual({ runId: 'a', expiresInMs: 1_000 });
    expect(oneShots).toEqual([false]);
    expect(slot.phase).toBe('prepared');
    expect(timer.armed).toBe(1);
    expect(await slot.begin(request('a', 2, true))).toBe('service:a');
    expect(slot.phase).toBe('running');
    expect(timer.armed).toBe(0);
    slot.end();
    expect(slot.phase).toBe('idle');
    expect(built).toEqual(['a']);
  });

  it('a Run with nothing prepared prepares implicitly (one-phase start, for older drivers)', async () => {
    const { slot, built, oneShots } = rig();
    expect(await slot.begin(request('a'))).toBe('service:a');
    expect(slot.phase).toBe('running');
    expect(built).toEqual(['a']);
    // The owner learns it is a one-phase start (peers may already run: it must not drop their mail).
    expect(oneShots).toEqual([true]);
  });

  it('a Run marked prepared is refused when this node does not hold it prepared (never prepared, or expired)', async () => {
    const { slot, timer, built } = rig();
    expect(await codeOf(slot.begin(request('a', 2, true)))).toBe('not-prepared');
    expect(built).toEqual([]);
    await slot.prepare(request('b', 2, true));
    timer.fire();
    const refused = slot.begin(request('b', 2, true));
    await expect(refused).rejects.toThrow(/does not hold run 'b' prepared \(it was expired: no Run within 1000 ms/);
    expect(slot.phase).toBe('idle');
  });

  it("a Run of another run than the prepared one is refused, and the prepared one stays", async () => {
    const { slot } = rig();
    await slot.prepare(request('a'));
    await expect(slot.begin(request('b'))).rejects.toThrow(/holds run 'a' prepared; a Run of 'b' must be prepared first/);
    expect(await codeOf(slot.begin(request('b')))).toBe('run-mismatch');
    expect(slot.phase).toBe('prepared');
    expect(await slot.begin(request('a'))).toBe('service:a');
  });

  it('a Run or a second Prepare with the run id but another request is refused', async () => {
    const { slot } = rig();
    await slot.prepare(request('a', 2));
    expect(await codeOf(slot.begin(request('a', 3)))).toBe('request-differs');
    expect(await codeOf(slot.prepare(request('a', 3)))).toBe('request-differs');
    expect(slot.phase).toBe('prepared');
  });

  it('a prepared run never started is dropped after the timeout: discarded, and its Run refused', async () => {
    const { slot, timer, discarded, dropped } = rig();
    await slot.prepare(request('a'));
    expect(discarded).toEqual([]);
    timer.fire();
    expect(slot.phase).toBe('idle');
    expect(discarded).toEqual(['service:a']);
    expect(dropped).toEqual(["a: expired: no Run within 1000 ms of its Prepare"]);
  });

  it('the timeout of a run that started does nothing (its timer was cancelled)', async () => {
    const { slot, timer, discarded } = rig();
    await slot.prepare(request('a'));
    await slot.begin(request('a'));
    timer.fire();
    expect(slot.phase).toBe('running');
    expect(discarded).toEqual([]);
  });

  it('Prepare and Run are busy (FAILED_PRECONDITION upstream) while a run is running or being prepared', async () => {
    const { slot } = rig();
    await slot.begin(request('a'));
    expect(await codeOf(slot.prepare(request('b')))).toBe('busy');
    expect(await codeOf(slot.begin(request('b')))).toBe('busy');
    await expect(slot.prepare(request('b'))).rejects.toThrow(/already running run 'a'/);
    slot.end();
    const second = rig();
    const release = second.holdPrepare();
    const preparing = second.slot.prepare(request('c'));
    expect(second.slot.phase).toBe('preparing');
    expect(await codeOf(second.slot.prepare(request('d')))).toBe('busy');
    expect(await codeOf(second.slot.begin(request('c')))).toBe('busy');
    release();
    await preparing;
    expect(second.slot.phase).toBe('prepared');
  });

  it('the same Prepare again is answered (a retry) and re-arms the timeout', async () => {
    const { slot, timer, built } = rig();
    await slot.prepare(request('a'));
    expect(await slot.prepare(request('a'))).toEqual({ runId: 'a', expiresInMs: 1_000 });
    expect(built).toEqual(['a']);
    expect(timer.armed).toBe(1);
  });

  it('a Prepare of another run supersedes a prepared one that did not start (its driver gave up)', async () => {
    const { slot, built, discarded, timer } = rig();
    await slot.prepare(request('a'));
    await slot.prepare(request('b'));
    expect(built).toEqual(['a', 'b']);
    expect(discarded).toEqual(['service:a']);
    expect(timer.armed).toBe(1);
    expect(await codeOf(slot.begin(request('a')))).toBe('run-mismatch');
    expect(await slot.begin(request('b'))).toBe('service:b');
  });

  it('a failed preparation leaves the slot idle and reports the cause', async () => {
    const { slot, failNextPrepare } = rig();
    failNextPrepare(new Error('too many clients'));
    await expect(slot.prepare(request('a'))).rejects.toThrow('too many clients');
    expect(slot.phase).toBe('idle');
    expect(await slot.begin(request('b'))).toBe('service:b');
  });

  it('drop discards a prepared run now, and a run being prepared once ready (its Prepare fails)', async () => {
    const { slot, discarded, holdPrepare } = rig();
    await slot.prepare(request('a'));
    await slot.drop('declared dead');
    expect(slot.phase).toBe('idle');
    expect(discarded).toEqual(['service:a']);
    const release = holdPrepare();
    const preparing = slot.prepare(request('b'));
    await slot.drop('declared dead');
    release();
    expect(await codeOf(preparing)).toBe('dropped');
    expect(discarded).toEqual(['service:a', 'service:b']);
    expect(slot.phase).toBe('idle');
  });

  it('drop leaves a running run alone (its owner aborts it)', async () => {
    const { slot, discarded } = rig();
    await slot.begin(request('a'));
    await slot.drop('closing');
    expect(slot.phase).toBe('running');
    expect(discarded).toEqual([]);
  });

  it('refuses a timeout that is not positive', () => {
    expect(() => rig(0)).toThrow(RangeError);
  });
});
