import { create, toBinary } from '@bufbuild/protobuf';
import type { NatsConnection } from '@nats-io/transport-node';
import { SwitchLink, connectNats, createSubjects, grpcPath } from '@lockfabric/live';
import type { LockPacket } from '@lockfabric/ports';
import { Switch } from '@lockfabric/switch';
import { FLAG_DUP, FLAG_HAS_AGENT, fissLockDecider } from '@lockfabric/lock-catalog';
import type { FissLockDecider } from '@lockfabric/lock-catalog';
import { MetricsRegistry, renderPrometheusText } from '@lockfabric/telemetry';
import { FaultDirection, FaultSpecSchema, PacketType, SetFaultsRequestSchema, SwitchControlService } from '@lockfabric/wire';
import type { DescribeSwitchResponse } from '@lockfabric/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSwitchDataplane, type SwitchDataplane } from '../src/switch-dataplane.js';
import { createSwitchProgram } from '../src/switch-program.js';
import { callRaw, describeSwitchAt, memoryLogger, startNatsServer, waitFor, type NatsServerHandle } from './support.js';

const subjects = createSubjects('sw-fiss-describe');
const LOCKS = 1_000_000;

let nats: NatsServerHandle;
let ncSwitch: NatsConnection;
let ncNodes: NatsConnection;
let service: SwitchDataplane;
let link: SwitchLink;
const logger = memoryLogger();
const metrics = new MetricsRegistry();
const arrived: LockPacket[] = [];

beforeAll(async () => {
  nats = await startNatsServer();
  ncSwitch = await connectNats({ servers: nats.url, name: 'switch', logger: memoryLogger() });
  ncNodes = await connectNats({ servers: nats.url, name: 'nodes', logger: memoryLogger() });
  // built the way main.ts builds it from --switch.lock-count / LOCKFABRIC_SWITCH_LOCK_COUNT
  const program = createSwitchProgram('fisslock', { lockCount: LOCKS });
  service = await startSwitchDataplane({ nc: ncSwitch, subjects, rack: 0, program, grpcPort: 0, grpcHost: '127.0.0.1', logger, metrics, faultSeed: 1 });
  link = new SwitchLink({ nc: ncNodes, subjects, machine: 1, rack: 0, logger: memoryLogger() });
  link.onPacket((p) => arrived.push(p));
  await ncNodes.flush();
});

afterAll(async () => {
  link?.close();
  await service?.close();
  await ncNodes?.close();
  await ncSwitch?.close();
  await nats?.stop();
});

const address = () => `127.0.0.1:${service.grpcPort}`;

const describeSwitch = (): Promise<DescribeSwitchResponse> => describeSwitchAt(address());

describe('switch-dataplane running fisslock for one million locks', () => {
  it('reports its register memory over Describe: at most 2.3 MB, and what the switch model computes', async () => {
    const description = await describeSwitch();
    const model = new Switch(fissLockDecider({ lockCount: LOCKS })).describe().registerBytes;
    expect(description.program).toBe('fisslock');
    expect(description.registerBytes).toBeLessThanOrEqual(2_300_000n);
    expect(description.registerBytes).toBe(BigInt(model));
    // 18 bits per lock and 256 32-bit sequence numbers, counted by hand
    expect(description.registerBytes).toBe(BigInt((LOCKS * 18) / 8 + 256 * 4));
    expect(description).toMatchObject({ lockCount: 1_000_000n, lockCapacity: 1_680_000n, policy: 'read-preferring', stages: 12 });
    expect(description.arrays.reduce((bits, a) => bits + a.sizeBits, 0n)).toBe(BigInt(LOCKS * 18 + 256 * 32));
  });

  it('says it at start and in its metrics', async () => {
    expect(logger.lines.some((line) => line.includes("program 'fisslock' (policy read-preferring, 1000000 locks of a capacity of 1680000, 2251024 register bytes)"))).toBe(true);
    service.collectMetrics?.();
    const text = await renderPrometheusText(metrics);
    expect(text).toContain('lockfabric_switch_register_bytes 2251024');
    expect(text).toContain('lockfabric_switch_lock_count 1000000');
    expect(text).toContain('lockfabric_switch_register_array_bits{array="fisslock.free"} 1000000');
  });

  it('an ACQUIRE duplicated on its way in is decided twice: a GRANT, then the copy routed as a duplicate, registers as after one', async () => {
    const set = await callRaw(
      address(),
      grpcPath(SwitchControlService.method.setFaults),
      toBinary(SetFaultsRequestSchema, create(SetFaultsRequestSchema, { faults: [create(FaultSpecSchema, { direction: FaultDirection.INGRESS, packetType: PacketType.ACQUIRE, duplicate: 1 })] })),
    );
    expect(set.error).toBeUndefined();
    link.send({ type: 'acquire', lock: 999_999, machine: 1, task: 7, mode: 'exclusive', incarnation: 0, seq: 1, flags: 0, agent: 1 });
    await waitFor(() => arrived.length === 2, { what: 'the GRANT and the duplicate at machine 1' });
    expect(arrived.map((p) => [p.type, p.flags & (FLAG_HAS_AGENT | FLAG_DUP)])).toStrictEqual([
      ['grant', FLAG_HAS_AGENT],
      ['acquire', FLAG_DUP],
    ]);
    expect(service.sw.counters().packetsByType.acquire).toBe(2);
    expect((service.sw.program as FissLockDecider).meta(999_999)).toStrictEqual({ free: false, mode: 'exclusive', mid: 1, inca: 0, pref: false });
  });
});
