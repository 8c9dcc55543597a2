import { create, toBinary } from '@bufbuild/protobuf';
import type { NatsConnection } from '@nats-io/transport-node';
import { SwitchLink, connectNats, createSubjects, grpcPath } from '@lockfabric/live';
import type { LockPacket } from '@lockfabric/ports';
import { forwardProgram } from '@lockfabric/switch';
import { FaultSpecSchema, FissSwitchAdmissionSchema, SetFaultsRequestSchema, SwitchControlService } from '@lockfabric/wire';
import type { DescribeSwitchResponse } from '@lockfabric/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DROP_RECOVERY_CLOSED } from '../src/dataplane.js';
import { startSwitchDataplane, type SwitchDataplane } from '../src/switch-dataplane.js';
import { callRaw, describeSwitchAt, memoryLogger, packet, startNatsServer, waitFor, type NatsServerHandle } from './support.js';

const subjects = createSubjects('sw-admission-describe');

let nats: NatsServerHandle;
let ncSwitch: NatsConnection;
let ncOthers: NatsConnection;
let service: SwitchDataplane;
let link1: SwitchLink;
let link2: SwitchLink;
const arrived: LockPacket[] = [];

beforeAll(async () => {
  nats = await startNatsServer();
  ncSwitch = await connectNats({ servers: nats.url, name: 'switch', logger: memoryLogger() });
  ncOthers = await connectNats({ servers: nats.url, name: 'others', logger: memoryLogger() });
  service = await startSwitchDataplane({ nc: ncSwitch, subjects, rack: 0, node: 200, program: forwardProgram(), grpcPort: 0, grpcHost: '127.0.0.1', logger: memoryLogger(), faultSeed: 1 });
  link1 = new SwitchLink({ nc: ncOthers, subjects, machine: 1, rack: 0, logger: memoryLogger() });
  link2 = new SwitchLink({ nc: ncOthers, subjects, machine: 2, rack: 0, logger: memoryLogger() });
  link2.onPacket((p) => arrived.push(p));
  await ncOthers.flush();
});

afterAll(async () => {
  link1?.close();
  link2?.close();
  await service?.close();
  await ncOthers?.close();
  await ncSwitch?.close();
  await nats?.stop();
});

const address = () => `127.0.0.1:${service.grpcPort}`;

const describeSwitch = (): Promise<DescribeSwitchResponse> => describeSwitchAt(address());

function admit(epoch: bigint, open: boolean): void {
  ncOthers.publish(subjects.switchAdmission(), toBinary(FissSwitchAdmissionSchema, create(FissSwitchAdmissionSchema, { node: 200, epoch, open })));
}

describe('switch-dataplane: admission as a coordinator sees it', () => {
  it('Describe reports the admission fence: closed at epoch 0 from the start, then what the orders made of it', async () => {
    // what a restarted coordinator reads to tell a switch that needs S1–S3 from one that was opened
    expect(await describeSwitch()).toMatchObject({ admissionOpen: false, admissionEpoch: 0n });
    admit(5n, true);
    await waitFor(() => service.admission.state.open, { what: 'the switch opened' });
    expect(await describeSwitch()).toMatchObject({ admissionOpen: true, admissionEpoch: 5n });
  });

  it('closing an open switch drops the copies a delay fault still holds: they were decided before the recovery', async () => {
    const faults = create(SetFaultsRequestSchema, { faults: [create(FaultSpecSchema, { delayNs: 5_000_000_000n })] });
    const set = await callRaw(address(), grpcPath(SwitchControlService.method.setFaults), toBinary(SetFaultsRequestSchema, faults));
    expect(set.error).toBeUndefined();
    link1.send(packet({ dst: 2, seq: 41 })); // unstamped: admitted, then held by the delay
    await waitFor(() => service.dataplane.stats().delayedInFlight === 1, { what: 'the copy held by the delay fault' });
    admit(6n, false);
    await waitFor(() => service.dataplane.stats().delayedInFlight === 0, { what: 'the held copy dropped at the close' });
    expect(service.dataplane.stats().dropsByReason[DROP_RECOVERY_CLOSED]).toBe(1);
    expect(await describeSwitch()).toMatchObject({ admissionOpen: false, admissionEpoch: 6n });
    // a close of a switch already closed drops nothing more (and nothing was delivered)
    admit(7n, false);
    await waitFor(() => service.admission.state.epoch === 7n, { what: 'the second close applied' });
    expect(service.dataplane.stats().dropsByReason[DROP_RECOVERY_CLOSED]).toBe(1);
    expect(arrived).toStrictEqual([]);
  });
});
