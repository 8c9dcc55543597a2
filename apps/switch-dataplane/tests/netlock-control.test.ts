import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import type { DescMessage, DescMethod, MessageShape } from '@bufbuild/protobuf';
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { NatsConnection } from '@nats-io/transport-node';
import { SwitchLink, connectNats, createSubjects, grpcPath } from '@lockfabric/live';
import type { LockPacket } from '@lockfabric/ports';
import { NETLOCK_FLAG_SWITCH, netlockProgram } from '@lockfabric/switch';
import {
  DescribeSwitchRequestSchema,
  DescribeSwitchResponseSchema,
  InstallNetLockQueuesRequestSchema,
  InstallNetLockQueuesResponseSchema,
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
const arrived: LockPacket[] = [];

beforeAll(async () => {
  nats = await startNatsServer();
  ncSwitch = await connectNats({ servers: nats.url, name: 'switch', logger: memoryLogger() });
  ncNodes = await connectNats({ servers: nats.url, name: 'nodes', logger: memoryLogger() });
  service = await startSwitchDataplane({ nc: ncSwitch, subjects, rack: 0, program: netlockProgram({ slotBudget: 64, maxHotLocks: 8 }), grpcPort: 0, grpcHost: '127.0.0.1', logger: memoryLogger(), faultSeed: 1 });
  link1 = new SwitchLink({ nc: ncNodes, subjects, machine: 1, rack: 0, logger: memoryLogger() });
  link1.onPacket((p) => arrived.push(p));
  await ncNodes.flush();
});

afterAll(async () => {
  link1?.close();
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
});
