import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { NatsConnection } from '@nats-io/transport-node';
import { SwitchLink, connectNats, createSubjects, grpcPath } from '@lockfabric/live';
import type { LockPacket } from '@lockfabric/ports';
import { FORWARD_TYPE_COUNTER, forwardProgram } from '@lockfabric/switch';
import { MetricsRegistry, renderPrometheusText } from '@lockfabric/telemetry';
import {
  DescribeSwitchRequestSchema,
  DescribeSwitchResponseSchema,
  FaultDirection,
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

  it('answers a call of another program (every method beyond the generic five) with NOT_FOUND, which the coordinator reads as that program not in use', async () => {
    const generic = new Set(['readRegisters', 'writeRegisters', 'setFaults', 'describe', 'reset']);
    const others = SwitchControlService.methods.filter((m) => !generic.has(m.localName));
    expect(others.length).toBeGreaterThan(0);
    for (const method of others) {
      const answer = await callRaw(address(), grpcPath(method), new Uint8Array());
      expect(answer.error?.code, method.name).toBe(GrpcStatus.NOT_FOUND);
      expect(answer.error?.details, method.name).toContain("program 'forward' does not serve it");
    }
  });

  it('exports packets, decisions, drops and decode errors as Prometheus metrics', async () => {
    service.collectMetrics?.();
    const text = await renderPrometheusText(metrics);
    expect(text).toMatch(/lockfabric_switch_packets_total\{type="acquire"\} \d+/);
    expect(text).toMatch(/lockfabric_switch_decisions_total\{decision="routed"\} \d+/);
    expect(text).toMatch(/lockfabric_switch_drops_total\{reason="fault-loss"\} 2/);
    expect(text).toMatch(/lockfabric_decode_errors_total\{source="lf\.sw-test\.sw\.0\.in"\} 1/);
    expect(text).toContain('lockfabric_switch_delayed_in_flight 0');
  });
});

describe('per-type and ingress faults through the service (SetFaults over gRPC, packets over NATS)', () => {
  /** Sends `packets` from machine 1 and waits until the data plane has taken every one off NATS. */
  async function sendAll(packets: readonly LockPacket[]): Promise<void> {
    const before = service.dataplane.stats().packetsIn;
    for (const p of packets) link1.send(p);
    await waitFor(() => service.dataplane.stats().packetsIn >= before + packets.length, { what: `the switch to take ${packets.length} packet(s)` });
  }

  const acquire = (seq: number) => packet({ type: 'acquire', dst: 2, seq });
  const release = (seq: number) => packet({ type: 'release', dst: 2, seq });

  it('an ACQUIRE loss=1 rule: of an ACQUIRE and a RELEASE only the RELEASE arrives, and the drop counter says why', async () => {
    expect((await setFaults([{ packetType: PacketType.ACQUIRE, loss: 1 }])).response?.active).toBe(1);
    const before = service.dataplane.stats().dropsByReason['fault-loss'] ?? 0;
    const lostAcquires = service.injector.stats().lostByType.acquire ?? 0;
    await sendAll([acquire(101), release(102)]);
    await waitFor(() => arrived.length === 1, { what: 'the RELEASE at machine 2' });
    // one link, one NATS connection: the ACQUIRE was handled before the RELEASE that arrived
    expect(arrived.map((p) => [p.type, p.seq])).toStrictEqual([['release', 102]]);
    expect(service.dataplane.stats().dropsByReason['fault-loss']).toBe(before + 1);
    expect(service.injector.stats().lostByType.acquire).toBe(lostAcquires + 1);
    expect((await setFaults([])).response?.active).toBe(0);
  });

  it('an ingress ACQUIRE loss=1 rule: the switch never sees the ACQUIRE; the RELEASE is decided and arrives', async () => {
    expect((await setFaults([{ direction: FaultDirection.INGRESS, packetType: PacketType.ACQUIRE, machine: 1, loss: 1 }])).response?.active).toBe(1);
    const counters = service.sw.counters();
    await sendAll([acquire(111), release(112)]);
    await waitFor(() => arrived.length === 1, { what: 'the RELEASE at machine 2' });
    expect(arrived.map((p) => [p.type, p.seq])).toStrictEqual([['release', 112]]);
    const after = service.sw.counters();
    expect(after.packetsByType.acquire ?? 0).toBe(counters.packetsByType.acquire ?? 0);
    expect(after.packetsByType.release).toBe((counters.packetsByType.release ?? 0) + 1);
    expect(service.dataplane.stats().dropsByReason['ingress-fault-loss']).toBe(1);
    expect(service.injector.stats().ingress.lostByType).toStrictEqual({ acquire: 1 });
    expect((await setFaults([])).response?.active).toBe(0);
  });

  it('an ingress duplicate from NATS is decided twice: the program counts it twice in its register', async () => {
    const subject = subjects.fault('switch');
    ncNodes.publish(subject, toBinary(FaultSpecSchema, create(FaultSpecSchema, { target: '*', direction: FaultDirection.INGRESS, packetType: PacketType.FREE, duplicate: 1 })));
    await waitFor(() => service.faults.active === 1, { what: 'the ingress fault from NATS' });
    const freesBefore = readFreeCount();
    await sendAll([packet({ type: 'free', dst: 2, seq: 121 })]);
    await waitFor(() => arrived.length === 2, { what: 'both copies at machine 2' });
    expect(arrived.map((p) => [p.type, p.seq])).toStrictEqual([
      ['free', 121],
      ['free', 121],
    ]);
    expect(readFreeCount()).toBe(freesBefore + 2);
    ncNodes.publish(subject, toBinary(FaultSpecSchema, create(FaultSpecSchema, { target: '*', direction: FaultDirection.INGRESS, packetType: PacketType.FREE })));
    await waitFor(() => service.faults.active === 0, { what: 'the ingress fault cleared' });
  });

  it('an ingress delay range holds a packet before the program; the packets sent after it overtake it', async () => {
    // seconds: far beyond any stall of a loaded machine, so the hold is certain when the RELEASE is in
    expect((await setFaults([{ direction: FaultDirection.INGRESS, packetType: PacketType.ACQUIRE, delayNs: 5_000_000_000n, delayMaxNs: 6_000_000_000n }])).response?.active).toBe(1);
    const decided = service.sw.counters().packets;
    await sendAll([acquire(131), release(132)]);
    await waitFor(() => arrived.length === 1, { what: 'the RELEASE at machine 2' });
    expect(service.sw.counters().packets).toBe(decided + 1);
    expect(service.dataplane.stats().delayedInFlight).toBe(1);
    // a drain ingests the held ACQUIRE now: it is decided after the RELEASE sent behind it
    service.dataplane.drain();
    await waitFor(() => arrived.length === 2, { what: 'the held ACQUIRE at machine 2' });
    expect(arrived.map((p) => p.seq)).toStrictEqual([132, 131]);
    expect(service.sw.counters().packets).toBe(decided + 2);
    expect(service.injector.stats().ingress.delayed).toBe(1);
    expect((await setFaults([])).response?.active).toBe(0);
  });

  it('exports the ingress fault effects and the register memory as Prometheus metrics', async () => {
    service.collectMetrics?.();
    const text = await renderPrometheusText(metrics);
    expect(text).toContain('lockfabric_switch_fault_effects_total{effect="ingress-lost"} 1');
    expect(text).toContain('lockfabric_switch_fault_effects_total{effect="ingress-duplicated"} 1');
    expect(text).toContain('lockfabric_switch_drops_total{reason="ingress-fault-loss"} 1');
    expect(text).toContain(`lockfabric_switch_register_bytes ${service.sw.describe().registerBytes}`);
    expect(text).toContain(`lockfabric_switch_register_array_bits{array="${FORWARD_TYPE_COUNTER}"} 320`);
    expect(text).toContain('lockfabric_switch_lock_count 0');
  });
});

/** The forward program's count of FREE packets, from its register (what the control plane reads). */
function readFreeCount(): number {
  return (service.sw.program as ReturnType<typeof forwardProgram>).counts().byType.free;
}
