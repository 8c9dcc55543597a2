import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import type { MachineOrders, ServerReport } from '@lockfabric/lock-fisslock';
import { FissMachineOrdersSchema, FissServerReportSchema, LockMode } from '@lockfabric/wire';
import { describe, expect, it } from 'vitest';
import { FissWireError, machineOrdersFromWire, machineOrdersToWire, serverReportFromWire, serverReportToWire } from './fiss-wire.js';

describe('FissLock recovery wire forms', () => {
  it('S1 reports and S2 orders survive encoding, bytes and decoding unchanged', () => {
    const report: ServerReport = {
      machine: 4,
      agents: [
        { lid: 7, machine: 4, mode: 'shared', holders: [{ mid: 4, task: 0x3f_fff1 }, { mid: 2, task: 5 }], wqueue: [{ mid: 9, task: 1, mode: 'exclusive' }], state: 'live' },
        { lid: 8, machine: 4, mode: 'exclusive', holders: [], wqueue: [], state: 'pending' },
      ],
      clients: [
        { lid: 7, mid: 4, task: 0x3f_fff1, mode: 'shared', state: 'granted', startNs: 0 },
        { lid: 9, mid: 4, task: 12, mode: 'exclusive', state: 'pending', startNs: 123_456_789_012 },
        { lid: 9, mid: 4, task: 11, mode: 'exclusive', state: 'aborting', startNs: 5 },
      ],
    };
    const bytes = toBinary(FissServerReportSchema, serverReportToWire(report));
    expect(serverReportFromWire(fromBinary(FissServerReportSchema, bytes), 'test')).toStrictEqual(report);

    const orders: MachineOrders = {
      machine: 4,
      agents: [{ lid: 7, machine: 4, mode: 'shared', holders: [{ mid: 4, task: 3, mode: 'shared' }], wqueue: [{ mid: 9, task: 1, mode: 'exclusive' }], inca: 0 }],
      wake: [{ lid: 7, mid: 4, task: 3, mode: 'shared' }],
      abort: [{ lid: 9, mid: 4, task: 12, reason: 'dropped by S2' }],
    };
    const orderBytes = toBinary(FissMachineOrdersSchema, machineOrdersToWire(orders));
    expect(machineOrdersFromWire(fromBinary(FissMachineOrdersSchema, orderBytes), 'test')).toStrictEqual(orders);
  });

  it('rejects what this build cannot read: an unknown mode, a missing request', () => {
    const badMode = create(FissServerReportSchema, { machine: 1, clients: [{ lid: 1, request: { mid: 1, task: 1, mode: LockMode.UNSPECIFIED }, state: 1 }] });
    expect(() => serverReportFromWire(badMode, 'test')).toThrow(/lock mode|mode/);
    const noRequest = create(FissMachineOrdersSchema, { machine: 1, wake: [{ lid: 3 }] });
    expect(() => machineOrdersFromWire(noRequest, 'test')).toThrow(FissWireError);
    const noAbortRequest = create(FissMachineOrdersSchema, { machine: 1, abort: [{ lid: 3, reason: 'x' }] });
    expect(() => machineOrdersFromWire(noAbortRequest, 'test')).toThrow(FissWireError);
  });
});
