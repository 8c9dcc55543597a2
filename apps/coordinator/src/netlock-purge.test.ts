import { create, toBinary } from '@bufbuild/protobuf';
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { NatsConnection } from '@nats-io/transport-node';
import { GrpcCallError, MalformedInputCounter, createSubjects } from '@lockfabric/live';
import type { Logger } from '@lockfabric/live';
import type { NodeId } from '@lockfabric/ports';
import { RealClock } from '@lockfabric/sim';
import { FissSwitchAnnounceSchema, PurgeNetLockMachineResponseSchema } from '@lockfabric/wire';
import type { PurgeNetLockMachineResponse } from '@lockfabric/wire';
import { describe, expect, it } from 'vitest';
import { startNetLockPurge } from './netlock-purge.js';
import type { PurgeCall } from './netlock-purge.js';
import { RecoveryBook } from './recovery-book.js';

const subjects = createSubjects('netlock-purge-test');
const quiet: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** A NATS connection that only records the announce subscription, so the test can play the switch. */
function fakeNats() {
  let deliver: ((data: Uint8Array) => void) | undefined;
  const nc = {
    subscribe: (_subject: string, options: { callback: (error: Error | null, msg: { data: Uint8Array }) => void }) => {
      deliver = (data) => options.callback(null, { data });
      return { unsubscribe: () => undefined };
    },
  } as unknown as NatsConnection;
  const announce = (address: string) => deliver?.(toBinary(FissSwitchAnnounceSchema, create(FissSwitchAnnounceSchema, { rack: 0, controlAddress: address })));
  return { nc, announce };
}

function setup(purge: PurgeCall, maxAttempts = 3) {
  const { nc, announce } = fakeNats();
  const clock = new RealClock();
  const recoveries = new RecoveryBook();
  const trigger = startNetLockPurge({ nc, subjects, logger: quiet, clock, recoveries, malformed: new MalformedInputCounter({ logger: quiet, clock }), purge, maxAttempts, retryDelayMs: 1 });
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
      if (attempts < 3) throw new GrpcCallError(GrpcStatus.UNAVAILABLE, 'connection refused', 'unavailable');
      return answer();
    });
    announce('127.0.0.1:5555');
    trigger.computeDead(member);
    await trigger.idle();
    expect(attempts).toBe(3);
    expect(trigger.outcomes.map((o) => o.outcome)).toEqual(['purged']);

    const down = setup(async () => {
      throw new GrpcCallError(GrpcStatus.UNAVAILABLE, 'connection refused', 'unavailable');
    });
    down.announce('127.0.0.1:5555');
    down.trigger.computeDead(down.member);
    await down.trigger.idle();
    expect(down.trigger.outcomes.map((o) => o.outcome)).toEqual(['failed']);
    expect(down.netlockAction()?.doneAtNs).toBeDefined();
    trigger.close();
    down.trigger.close();
  });

  it('a switch without the netlock program (NOT_FOUND) or no switch at all: nothing to purge, the action is over', async () => {
    let calls = 0;
    const forward = setup(async () => {
      calls++;
      throw new GrpcCallError(GrpcStatus.NOT_FOUND, "needs the netlock program; this switch runs 'forward'", 'not found');
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
