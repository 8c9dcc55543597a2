import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import type { NatsConnection } from '@nats-io/transport-node';
import { SwitchLink, connectNats, createSubjects, grpcPath } from '@lockfabric/live';
import { DECIDER_ARRAYS, FENCE_WINDOW, FLAG_HAS_AGENT, writeSwitchImage } from '@lockfabric/lock-catalog';
import type { DeciderControl } from '@lockfabric/lock-catalog';
import type { LockPacket } from '@lockfabric/ports';
import { fissLockDecider } from '@lockfabric/lock-catalog';
import { ReadRegistersRequestSchema, ReadRegistersResponseSchema, SwitchControlService, WriteRegistersRequestSchema } from '@lockfabric/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSwitchDataplane, type SwitchDataplane } from '../src/switch-dataplane.js';
import { callRaw, memoryLogger, startNatsServer, waitFor, type NatsServerHandle } from './support.js';

const subjects = createSubjects('sw-fiss-recovery');
const LOCKS = 64;

let nats: NatsServerHandle;
let ncSwitch: NatsConnection;
let ncNodes: NatsConnection;
let service: SwitchDataplane;
const links: SwitchLink[] = [];
const arrived = new Map<number, LockPacket[]>();

/** S3's control plane over the service's SwitchControl gRPC (what the coordinator uses). */
function grpcControl(address: string): DeciderControl {
  const write = async (array: string, index: number, values: readonly number[]): Promise<void> => {
    const r = await callRaw(address, grpcPath(SwitchControlService.method.writeRegisters), toBinary(WriteRegistersRequestSchema, create(WriteRegistersRequestSchema, { array, index, values: [...values] })));
    if (r.error) throw r.error;
  };
  return {
    arrays: [DECIDER_ARRAYS.seq, DECIDER_ARRAYS.free, DECIDER_ARRAYS.rw, DECIDER_ARRAYS.mid, DECIDER_ARRAYS.inca],
    readRegister: async (array, index) => {
      const r = await callRaw(address, grpcPath(SwitchControlService.method.readRegisters), toBinary(ReadRegistersRequestSchema, create(ReadRegistersRequestSchema, { array, index, count: 1 })));
      if (r.error || !r.response) throw r.error ?? new Error('no response');
      return fromBinary(ReadRegistersResponseSchema, r.response).values[0] ?? 0;
    },
    fill: (array, value) => write(array, 0, new Array<number>(array === DECIDER_ARRAYS.seq ? 256 : LOCKS).fill(value)),
    write,
  };
}

beforeAll(async () => {
  nats = await startNatsServer();
  ncSwitch = await connectNats({ servers: nats.url, name: 'switch', logger: memoryLogger() });
  ncNodes = await connectNats({ servers: nats.url, name: 'nodes', logger: memoryLogger() });
  service = await startSwitchDataplane({ nc: ncSwitch, subjects, rack: 0, program: fissLockDecider({ lockCount: LOCKS }), grpcPort: 0, grpcHost: '127.0.0.1', logger: memoryLogger(), faultSeed: 1 });
  for (const machine of [1, 2, 3]) {
    const link = new SwitchLink({ nc: ncNodes, subjects, machine, rack: 0, logger: memoryLogger() });
    arrived.set(machine, []);
    link.onPacket((p) => arrived.get(machine)?.push(p));
    links.push(link);
  }
  await ncNodes.flush();
});

afterAll(async () => {
  for (const link of links) link.close();
  await service?.close();
  await ncNodes?.close();
  await ncSwitch?.close();
  await nats?.stop();
});

describe('switch-dataplane in FissLock recovery', () => {
  it('S0 → S3: a (re)started switch is all free; the control plane restores held locks and seq windows, and fences a failed machine', async () => {
    // S0: a fresh process has every lock free, inca 0, seq 0
    const sw = service.sw;
    expect(Array.from(sw.readRegisters(DECIDER_ARRAYS.free, 0, LOCKS)).every((v) => v === 1)).toBe(true);
    expect(Array.from(sw.readRegisters(DECIDER_ARRAYS.inca, 0, LOCKS)).every((v) => v === 0)).toBe(true);
    // machine 3 got some packets through before it failed
    for (let seq = 1; seq <= 3; seq++) links[2]?.send({ type: 'acquire', lock: 40 + seq, machine: 3, task: seq, mode: 'exclusive', incarnation: 0, seq, flags: 0, agent: 3 });
    await waitFor(() => (arrived.get(3)?.length ?? 0) >= 3);

    // S3: lock 5 held exclusive with its agent on machine 2; survivors 1, 2 restart at seq 0; 3 is fenced
    const control = grpcControl(`127.0.0.1:${service.grpcPort}`);
    const lastSeq3 = await control.readRegister(DECIDER_ARRAYS.seq, 3);
    expect(lastSeq3).toBe(3);
    await writeSwitchImage(control, {
      held: [{ lid: 5, mode: 'exclusive', mid: 2, pref: false }],
      seq: [
        { machine: 1, value: 0 },
        { machine: 2, value: 0 },
        { machine: 3, value: (lastSeq3 - FENCE_WINDOW) >>> 0 },
      ],
    });
    expect(sw.readRegister(DECIDER_ARRAYS.free, 41)).toBe(1); // what 3 held is free again
    expect(sw.readRegister(DECIDER_ARRAYS.mid, 5)).toBe(3); // mid + 1

    // machine 1 asks for the restored lock (queued at the agent on 2) and for a free one (granted to 1)
    links[0]?.send({ type: 'acquire', lock: 5, machine: 1, task: 1, mode: 'exclusive', incarnation: 0, seq: 1, flags: 0, agent: 1 });
    links[0]?.send({ type: 'acquire', lock: 6, machine: 1, task: 2, mode: 'exclusive', incarnation: 0, seq: 2, flags: 0, agent: 1 });
    // machine 3 comes back and asks for lock 7 with its next seq: dropped, nothing decided
    const gapsBefore = sw.counters().decisions['seq-gap'] ?? 0;
    const before = arrived.get(3)?.length ?? 0;
    links[2]?.send({ type: 'acquire', lock: 7, machine: 3, task: 9, mode: 'exclusive', incarnation: 0, seq: 4, flags: 0, agent: 3 });
    const gaps = (): number => sw.counters().decisions['seq-gap'] ?? 0;
    await waitFor(() => arrived.get(2)?.some((p) => p.type === 'acquire' && p.lock === 5) === true && arrived.get(1)?.some((p) => p.type === 'grant' && p.lock === 6) === true && gaps() > gapsBefore);
    expect(arrived.get(1)?.find((p) => p.type === 'grant' && p.lock === 6)?.flags).toBe(FLAG_HAS_AGENT);
    expect(sw.readRegister(DECIDER_ARRAYS.free, 7)).toBe(1);
    expect(arrived.get(3)?.length).toBe(before);
  });
});
