import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import type { DescMessage, DescMethod, MessageShape } from '@bufbuild/protobuf';
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { NatsConnection } from '@nats-io/transport-node';
import { SwitchLink, connectNats, createSubjects, grpcPath } from '@lockfabric/live';
import type { LockPacket } from '@lockfabric/ports';
import { NETLOCK_FLAG_SWITCH, netlockProgram } from '@lockfabric/lock-catalog';
import {
  DescribeSwitchRequestSchema,
  DescribeSwitchResponseSchema,
  InstallNetLockQueuesRequestSchema,
  InstallNetLockQueuesResponseSchema,
  PurgeNetLockMachineRequestSchema,
  PurgeNetLockMachineResponseSchema,
  ResetSwitchRequestSchema,
  ResetSwitchResponseSchema,
  SwitchControlService,
} from '@lockfabric/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSwitchDataplane, type SwitchDataplane } from '../src/switch-dataplane.js';
import { callRaw, memoryLogger, packet, startNatsServer, waitFor, type NatsServerHandle } from './support.js';

// NetLock's control plane over gRPC: the driver installs the knapsack allocation of hot-lock
// queues, reads the program's decisions (how many grants the switch decided) and resets between runs.
const subjects = createSubjects('sw-netlock-test');
let nats: NatsServerHandle;
let ncSwitch: NatsConnection;
let ncNodes: NatsConnection;
let service: SwitchDataplane;
let link1: SwitchLink;
let link3: SwitchLink;
const arrived: LockPacket[] = [];
const arrived3: LockPacket[] = [];

beforeAll(async () => {
  nats = await startNatsServer();
  ncSwitch = await connectNats({ servers: nats.url, name: 'switch', logger: memoryLogger() });
  ncNodes = await connectNats({ servers: nats.url, name: 'nodes', logger: memoryLogger() });
  service = await startSwitchDataplane({ nc: ncSwitch, subjects, rack: 0, program: netlockProgram({ slotBudget: 64, maxHotLocks: 8 }), grpcPort: 0, grpcHost: '127.0.0.1', logger: memoryLogger(), faultSeed: 1 });
  link1 = new SwitchLink({ nc: ncNodes, subjects, machine: 1, rack: 0, logger: memoryLogger() });
  link1.onPacket((p) => arrived.push(p));
  link3 = new SwitchLink({ nc: ncNodes, subjects, machine: 3, rack: 0, logger: memoryLogger() });
  link3.onPacket((p) => arrived3.push(p));
  await ncNodes.flush();
});

afterAll(async () => {
  link1?.close();
  link3?.close();
  await service?.close();
  await ncNodes?.close();
  await ncSwitch?.close();
  await nats?.stop();
});

async function call<I extends DescMessage, O extends DescMessage>(method: DescMethod, input: I, request: MessageShape<I>, output: O) {
  const { response, error } = await callRaw(`127.0.0.1:${service.grpcPort}`, grpcPath(method), toBinary(input, request));
  return { response: response && fromBinary(output, response), error };
}

const install = (queues: { lock: number; base: number; size: number }[]) =>
  call(SwitchControlService.method.installNetLockQueues, InstallNetLockQueuesRequestSchema, create(InstallNetLockQueuesRequestSchema, { queues }), InstallNetLockQueuesResponseSchema);
const purge = (machine: number) =>
  call(SwitchControlService.method.purgeNetLockMachine, PurgeNetLockMachineRequestSchema, create(PurgeNetLockMachineRequestSchema, { machine }), PurgeNetLockMachineResponseSchema);
const describeSwitch = () => call(SwitchControlService.method.describe, DescribeSwitchRequestSchema, create(DescribeSwitchRequestSchema), DescribeSwitchResponseSchema);

describe('NetLock control over SwitchControl gRPC', () => {
  it('installs hot-lock queues: an ACQUIRE of a hot lock is granted by the switch and counted as its decision', async () => {
    const installed = await install([{ lock: 7, base: 0, size: 4 }]);
    expect(installed.error).toBeUndefined();
    expect(installed.response?.hotLocks).toBe(1);
    expect(installed.response?.slots).toBe(4);
    link1.send(packet({ lock: 7, dst: 2, seq: 1 }));
    await waitFor(() => arrived.length === 1, { what: 'the switch GRANT at machine 1' });
    expect(arrived[0]?.type).toBe('grant');
    expect((arrived[0]?.flags ?? 0) & NETLOCK_FLAG_SWITCH).toBe(NETLOCK_FLAG_SWITCH);
    const described = await describeSwitch();
    expect(described.response?.decisions['grant-switch']).toBe(1n);
  });

  it('Reset sets registers and decision counts back; the installed queues stay', async () => {
    const reset = await call(SwitchControlService.method.reset, ResetSwitchRequestSchema, create(ResetSwitchRequestSchema), ResetSwitchResponseSchema);
    expect(reset.error).toBeUndefined();
    expect((await describeSwitch()).response?.decisions).toEqual({});
    expect(service.sw.readRegisters('netlock.qstate', 0, 1)[0]).toBe(0);
    arrived.length = 0;
    link1.send(packet({ lock: 7, dst: 2, seq: 2 }));
    await waitFor(() => arrived.length === 1, { what: 'a second switch GRANT after the reset' });
    expect(arrived[0]?.type).toBe('grant');
  });

  it('refuses a queue that does not fit the slot budget, with a status', async () => {
    const tooBig = await install([{ lock: 9, base: 60, size: 10 }]);
    expect(tooBig.error?.code).toBe(GrpcStatus.NOT_FOUND);
  });

  it('PurgeNetLockMachine: the dead holder’s entry goes, the waiter behind it gets its GRANT; a second call is a no-op', async () => {
    await install([{ lock: 7, base: 0, size: 4 }]);
    arrived.length = 0;
    arrived3.length = 0;
    link3.send(packet({ lock: 7, machine: 3, dst: 2, seq: 1 })); // machine 3 holds
    await waitFor(() => arrived3.length === 1, { what: 'machine 3 granted' });
    link1.send(packet({ lock: 7, machine: 1, dst: 2, seq: 5 })); // machine 1 waits in the switch queue
    await waitFor(() => service.sw.counters().decisions['queued'] === 1, { what: 'machine 1 queued' });
    const first = await purge(3);
    expect(first.error).toBeUndefined();
    expect(first.response).toMatchObject({ removed: 1, removedHolders: 1, locks: [7], grants: 1, wasFenced: false });
    await waitFor(() => arrived.length === 1, { what: 'the purge GRANT at machine 1' });
    expect(arrived[0]).toMatchObject({ type: 'grant', lock: 7, machine: 1, seq: 5, mode: 'exclusive' });
    const again = await purge(3);
    expect(again.response).toMatchObject({ removed: 0, grants: 0, wasFenced: true });
    // Fenced: machine 3's late release does not dequeue machine 1's hold.
    link3.send(packet({ type: 'release', lock: 7, machine: 3, dst: 2, seq: 1 }));
    await waitFor(() => service.sw.counters().decisions['fenced'] === 1, { what: 'the late release dropped as fenced' });
  });

  it('PurgeNetLockMachine refuses a machine id the fence does not cover, with INVALID_ARGUMENT', async () => {
    const bad = await purge(70_000);
    expect(bad.error?.code).toBe(GrpcStatus.INVALID_ARGUMENT);
  });
});
