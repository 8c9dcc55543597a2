import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { NatsConnection } from '@nats-io/transport-node';
import { SwitchLink, connectNats, createSubjects, grpcPath } from '@lockfabric/live';
import type { LockPacket } from '@lockfabric/ports';
import { FORWARD_TYPE_COUNTER, forwardProgram } from '@lockfabric/switch';
import { MetricsRegistry } from '@lockfabric/telemetry';
import {
  DescribeSwitchRequestSchema,
  DescribeSwitchResponseSchema,
  FaultSpecSchema,
  PacketType,
  ReadRegistersRequestSchema,
  ReadRegistersResponseSchema,
  SetFaultsRequestSchema,
  SetFaultsResponseSchema,
  SwitchControlService,
  WriteRegistersRequestSchema,
  WriteRegistersResponseSchema,
} from '@lockfabric/wire';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSwitchDataplane, type SwitchDataplane } from '../src/switch-dataplane.js';
import { callRaw, memoryLogger, packet, startNatsServer, waitFor, type NatsServerHandle } from './support.js';

const subjects = createSubjects('sw-test');
const GARBAGE = new Uint8Array([0xff, 0xff, 0xff, 0xff]);

let nats: NatsServerHandle;
let ncSwitch: NatsConnection;
let ncNodes: NatsConnection;
let service: SwitchDataplane;
let link1: SwitchLink;
let link2: SwitchLink;
const metrics = new MetricsRegistry();
const arrived: LockPacket[] = [];

beforeAll(async () => {
  nats = await startNatsServer();
  ncSwitch = await connectNats({ servers: nats.url, name: 'switch', logger: memoryLogger() });
  ncNodes = await connectNats({ servers: nats.url, name: 'nodes', logger: memoryLogger() });
  service = await startSwitchDataplane({ nc: ncSwitch, subjects, rack: 0, program: forwardProgram(), grpcPort: 0, grpcHost: '127.0.0.1', logger: memoryLogger(), metrics, faultSeed: 1 });
  link1 = new SwitchLink({ nc: ncNodes, subjects, machine: 1, rack: 0, logger: memoryLogger() });
  link2 = new SwitchLink({ nc: ncNodes, subjects, machine: 2, rack: 0, logger: memoryLogger() });
  link2.onPacket((p) => arrived.push(p));
  await ncNodes.flush();
});

afterAll(async () => {
  link1?.close();
  link2?.close();
  await service?.close();
  await ncNodes?.close();
  await ncSwitch?.close();
  await nats?.stop();
});

beforeEach(() => {
  arrived.length = 0;
});

const address = () => `127.0.0.1:${service.grpcPort}`;

async function setFaults(faults: Parameters<typeof create<typeof FaultSpecSchema>>[1][]) {
  const request = create(SetFaultsRequestSchema, { faults: faults.map((f) => create(FaultSpecSchema, f)) });
  const { response, error } = await callRaw(address(), grpcPath(SwitchControlService.method.setFaults), toBinary(SetFaultsRequestSchema, request));
  return { response: response && fromBinary(SetFaultsResponseSchema, response), error };
}

/** Sends a packet from machine 1 to machine 2 and waits until the switch has processed it. */
async function sendThrough(seq: number): Promise<void> {
  const before = service.sw.counters().packets;
  link1.send(packet({ dst: 2, seq }));
  await waitFor(() => service.sw.counters().packets > before, { what: `the switch to process packet ${seq}` });
}

describe('switch-dataplane over NATS', () => {
  it('forwards a packet from one SwitchLink to another', async () => {
    await sendThrough(1);
    await waitFor(() => arrived.length === 1, { what: 'the packet at machine 2' });
    expect(arrived[0]).toStrictEqual(packet({ dst: 2, seq: 1 }));
  });

  it('drops the packet under a loss=1 fault set over SetFaults, and forwards again once cleared', async () => {
    const set = await setFaults([{ loss: 1 }]);
    expect(set.response?.active).toBe(1);
    const lostBefore = service.dataplane.stats().dropsByReason['fault-loss'] ?? 0;
    await sendThrough(2);
    expect(service.dataplane.stats().dropsByReason['fault-loss']).toBe(lostBefore + 1);

    expect((await setFaults([])).response?.active).toBe(0);
    await sendThrough(3);
    await waitFor(() => arrived.length > 0, { what: 'the packet sent after clearing the faults' });
    // The lost packet never arrives: the first one machine 2 sees is the one sent after clearing.
    expect(arrived.map((p) => p.seq)).toStrictEqual([3]);
  });

  it('takes a FaultSpec from ctl.fault.switch and clears it with a spec without effect', async () => {
    const subject = subjects.fault('switch');
    ncNodes.publish(subject, toBinary(FaultSpecSchema, create(FaultSpecSchema, { target: '0', packetType: PacketType.ACQUIRE, loss: 1 })));
    ncNodes.publish(subject, toBinary(FaultSpecSchema, create(FaultSpecSchema, { target: '5', loss: 1 })));
    await waitFor(() => service.faults.active === 1, { what: 'the fault from NATS' });
    await sendThrough(4);
    ncNodes.publish(subject, toBinary(FaultSpecSchema, create(FaultSpecSchema, { target: '0', packetType: PacketType.ACQUIRE })));
    await waitFor(() => service.faults.active === 0, { what: 'the fault to be cleared' });
    await sendThrough(5);
    await waitFor(() => arrived.length > 0, { what: 'the packet sent after clearing' });
    expect(arrived.map((p) => p.seq)).toStrictEqual([5]);
  });

  it('counts malformed bytes on the switch and fault subjects and keeps forwarding', async () => {
    const into = subjects.switchIn(0);
    const faults = subjects.fault('switch');
    ncNodes.publish(into, GARBAGE);
    ncNodes.publish(faults, GARBAGE);
    ncNodes.publish(faults, toBinary(FaultSpecSchema, create(FaultSpecSchema, { loss: 3 })));
    await waitFor(() => service.malformed.count(into) === 1 && service.malformed.count(faults) === 2, { what: 'the malformed input to be counted' });
    expect(service.faults.active).toBe(0);
    await sendThrough(6);
    await waitFor(() => arrived.length === 1, { what: 'the packet after the garbage' });
    expect(arrived[0]?.seq).toBe(6);
  });
});

describe('SwitchControl gRPC', () => {
  it('describes the program, its arrays and its register memory', async () => {
    const { response } = await callRaw(address(), grpcPath(SwitchControlService.method.describe), toBinary(DescribeSwitchRequestSchema, create(DescribeSwitchRequestSchema)));
    const description = fromBinary(DescribeSwitchResponseSchema, response ?? new Uint8Array());
    expect(description.program).toBe('forward');
    expect(description.rack).toBe(0);
    expect(description.stages).toBe(12);
    expect(description.arrays.map((a) => a.name)).toContain(FORWARD_TYPE_COUNTER);
    expect(description.registerBytes).toBe(BigInt(service.sw.describe().registerBytes));
  });

  it('reads and writes registers', async () => {
    const write = create(WriteRegistersRequestSchema, { array: FORWARD_TYPE_COUNTER, index: 2, values: [40, 41] });
    const written = await callRaw(address(), grpcPath(SwitchControlService.method.writeRegisters), toBinary(WriteRegistersRequestSchema, write));
    expect(fromBinary(WriteRegistersResponseSchema, written.response ?? new Uint8Array()).written).toBe(2);
    const read = create(ReadRegistersRequestSchema, { array: FORWARD_TYPE_COUNTER, index: 2, count: 2 });
    const { response } = await callRaw(address(), grpcPath(SwitchControlService.method.readRegisters), toBinary(ReadRegistersRequestSchema, read));
    expect(fromBinary(ReadRegistersResponseSchema, response ?? new Uint8Array()).values).toStrictEqual([40, 41]);
  });

  it('answers bad requests with a status and keeps serving', async () => {
    const readPath = grpcPath(SwitchControlService.method.readRegisters);
    const unknown = await callRaw(address(), readPath, toBinary(ReadRegistersRequestSchema, create(ReadRegistersRequestSchema, { array: 'nope' })));
    expect(unknown.error?.code).toBe(GrpcStatus.NOT_FOUND);
    const outside = await callRaw(address(), readPath, toBinary(ReadRegistersRequestSchema, create(ReadRegistersRequestSchema, { array: FORWARD_TYPE_COUNTER, index: 1000 })));
    expect(outside.error?.code).toBe(GrpcStatus.OUT_OF_RANGE);
    const before = service.malformed.count();
    const garbage = await callRaw(address(), readPath, GARBAGE);
    expect(garbage.error?.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    const badFault = await setFaults([{ loss: 2 }]);
    expect(badFault.error?.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    const otherSwitch = await setFaults([{ target: '9', loss: 1 }]);
    expect(otherSwitch.error?.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(service.malformed.count()).toBe(before + 3);
    expect(service.faults.active).toBe(0);
    const ok = await callRaw(address(), grpcPath(SwitchControlService.method.describe), new Uint8Array());
    expect(ok.error).toBeUndefined();
  });

  it('exports packets, decisions, drops and decode errors as Prometheus metrics', () => {
    service.collectMetrics?.();
    const text = metrics.render();
    expect(text).toMatch(/lockfabric_switch_packets_total\{type="acquire"\} \d+/);
    expect(text).toMatch(/lockfabric_switch_decisions_total\{decision="routed"\} \d+/);
    expect(text).toMatch(/lockfabric_switch_drops_total\{reason="fault-loss"\} 2/);
    expect(text).toMatch(/lockfabric_decode_errors_total\{source="lf\.sw-test\.sw\.0\.in"\} 1/);
    expect(text).toContain('lockfabric_switch_delayed_in_flight 0');
  });
});
