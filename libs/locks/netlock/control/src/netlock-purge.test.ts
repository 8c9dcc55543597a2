import { create, toBinary } from '@bufbuild/protobuf';
import type { NodeId } from '@lockfabric/ports';
import { RealClock } from '@lockfabric/realtime';
import { FissSwitchAnnounceSchema, PurgeNetLockMachineResponseSchema } from '@lockfabric/wire';
import type { PurgeNetLockMachineResponse } from '@lockfabric/wire';
import { describe, expect, it } from 'vitest';
import { MalformedTally, RecoveryBook, SwitchProgramAbsentError, createSubjects, silentLogger as quiet } from '@lockfabric/control';
import type { BusMessage, ControlBus, SwitchControlCallerFactory } from '@lockfabric/control';
import { NetLockNotInUseError, callerPurgePort, startNetLockPurge } from './netlock-purge.js';
import type { PurgeCall } from './netlock-purge.js';

const subjects = createSubjects('netlock-purge-test');
// NetLock's compute rule as the book sees it (this package may not import lock-netlock: a project cycle through its tests).
const NETLOCK_ONLY = new Map([['netlock', { compute: { mechanism: 'driven' as const, action: 'switch-queue purge' } }]]);
/** A control bus that only records the announce subscription, so the test can play the switch. */
function fakeBus() {
  let deliver: ((data: Uint8Array) => void) | undefined;
  const bus: ControlBus = {
    publish: () => undefined,
    request: () => Promise.reject(new Error('no requests here')),
    subscribe: (subject: string, handler: (message: BusMessage) => void) => {
      deliver = (data) => handler({ subject, data });
      return () => undefined;
    },
  };
  const announce = (address: string) => deliver?.(toBinary(FissSwitchAnnounceSchema, create(FissSwitchAnnounceSchema, { rack: 0, controlAddress: address })));
  return { bus, announce };
}

function setup(purge: PurgeCall, maxAttempts = 3) {
  const { bus, announce } = fakeBus();
  const clock = new RealClock();
  const recoveries = new RecoveryBook({ protocols: NETLOCK_ONLY });
  const trigger = startNetLockPurge({ bus, subjects, logger: quiet, clock, recoveries, malformed: new MalformedTally(), purge, maxAttempts, retryDelayMs: 1 });
  const member = { id: '3', node: 3, incarnation: 5n };
  recoveries.begin({ role: 'compute', ...member }, 1n, clock.nowNs());
  const netlockAction = () => recoveries.all()[0]?.actions.find((a) => a.protocol === 'netlock');
  return { trigger, announce, member, netlockAction };
}

const answer = (): PurgeNetLockMachineResponse => create(PurgeNetLockMachineResponseSchema, { removed: 2, removedHolders: 1, locks: [7], grants: 1 });

describe('NetLock purge trigger (coordinator)', () => {
  it('calls the announced switch once per death; a repeated report of the same incarnation is ignored', async () => {
    const calls: [string, NodeId][] = [];
    const { trigger, announce, member, netlockAction } = setup(async (address, machine) => {
      calls.push([address, machine]);
      return answer();
    });
    announce('127.0.0.1:5555');
    expect(netlockAction()).toMatchObject({ mechanism: 'driven' });
    expect(netlockAction()?.doneAtNs).toBeUndefined();
    trigger.computeDead(member);
    trigger.computeDead(member);
    await trigger.idle();
    expect(calls).toEqual([['127.0.0.1:5555', 3]]);
    expect(trigger.outcomes.map((o) => o.outcome)).toEqual(['purged']);
    expect(netlockAction()?.doneAtNs).toBeDefined();
    // A later death of the node's next incarnation is purged again.
    trigger.computeDead({ ...member, incarnation: 6n });
    await trigger.idle();
    expect(calls).toHaveLength(2);
    trigger.close();
  });

  it('retries an unreachable switch (the purge is idempotent), then gives up with a failed outcome', async () => {
    let attempts = 0;
    const { trigger, announce, member } = setup(async () => {
      attempts++;
      if (attempts < 3) throw new Error('switch control purgeNetLockMachine: connection refused');
      return answer();
    });
    announce('127.0.0.1:5555');
    trigger.computeDead(member);
    await trigger.idle();
    expect(attempts).toBe(3);
    expect(trigger.outcomes.map((o) => o.outcome)).toEqual(['purged']);

    const down = setup(async () => {
      throw new Error('switch control purgeNetLockMachine: connection refused');
    });
    down.announce('127.0.0.1:5555');
    down.trigger.computeDead(down.member);
    await down.trigger.idle();
    expect(down.trigger.outcomes.map((o) => o.outcome)).toEqual(['failed']);
    expect(down.netlockAction()?.doneAtNs).toBeDefined();
    trigger.close();
    down.trigger.close();
  });

  it('a switch without the netlock program (NetLockNotInUseError; NOT_FOUND live) or no switch at all: nothing to purge, the action is over', async () => {
    let calls = 0;
    const forward = setup(async () => {
      calls++;
      throw new NetLockNotInUseError('127.0.0.1:5555', "needs the netlock program; this switch runs 'forward'");
    });
    forward.announce('127.0.0.1:5555');
    forward.trigger.computeDead(forward.member);
    await forward.trigger.idle();
    expect(calls).toBe(1);
    expect(forward.trigger.outcomes.map((o) => o.outcome)).toEqual(['not-netlock']);

    const none = setup(async () => answer());
    none.trigger.computeDead(none.member);
    await none.trigger.idle();
    expect(none.trigger.outcomes.map((o) => o.outcome)).toEqual(['no-switch']);
    expect(none.netlockAction()?.doneAtNs).toBeDefined();
    forward.trigger.close();
    none.trigger.close();
  });
});

describe('callerPurgePort (the purge over a switch control service)', () => {
  /** A fake control service per address that records what it was asked, answering or refusing. */
  function fakeCallers(absent: boolean) {
    const log: string[] = [];
    const open: SwitchControlCallerFactory = (address) => ({
      address,
      warm: () => void log.push(`warm ${address}`),
      call: async (method, request) => {
        log.push(`${method.name} ${address} ${(request as unknown as { machine: number }).machine}`);
        if (absent) throw new SwitchProgramAbsentError(address, method.name, "needs the netlock program; this switch runs 'forward'");
        return answer() as never;
      },
      close: () => void log.push(`close ${address}`),
    });
    return { open, log };
  }

  it('calls PurgeNetLockMachine on one client per announced address, reopened when the address changes', async () => {
    const { open, log } = fakeCallers(false);
    const port = callerPurgePort(open);
    port.warm?.('10.0.0.1:1');
    expect((await port.purge('10.0.0.1:1', 4)).removed).toBe(2);
    await port.purge('10.0.0.2:1', 5);
    port.close?.();
    expect(log).toEqual(['warm 10.0.0.1:1', 'PurgeNetLockMachine 10.0.0.1:1 4', 'close 10.0.0.1:1', 'warm 10.0.0.2:1', 'PurgeNetLockMachine 10.0.0.2:1 5', 'close 10.0.0.2:1']);
  });

  it('a switch whose program does not serve the call is NetLock not in use, so the purge ends at once', async () => {
    const { open } = fakeCallers(true);
    const { bus, announce } = fakeBus();
    const recoveries = new RecoveryBook({ protocols: NETLOCK_ONLY });
    const clock = new RealClock();
    const trigger = startNetLockPurge({ bus, subjects, logger: quiet, clock, recoveries, malformed: new MalformedTally(), purge: callerPurgePort(open), maxAttempts: 3, retryDelayMs: 1 });
    await expect(callerPurgePort(open).purge('10.0.0.1:1', 4)).rejects.toBeInstanceOf(NetLockNotInUseError);
    announce('10.0.0.1:1');
    trigger.computeDead({ id: '4', node: 4, incarnation: 1n });
    await trigger.idle();
    expect(trigger.outcomes.map((o) => o.outcome)).toEqual(['not-netlock']);
    trigger.close();
  });
});
