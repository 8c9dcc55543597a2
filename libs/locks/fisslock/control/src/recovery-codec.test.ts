import { create } from '@bufbuild/protobuf';
import { FissServerReportSchema, LockMode } from '@lockfabric/wire';
import type { FissClientState } from '@lockfabric/wire';
import { describe, expect, it } from 'vitest';
import { FissWireError, serverReportFromWire } from './recovery-codec.js';

// The round trip against the compute node's half is in e2e/tests/live-fisslock-recovery-wire.test.ts.
describe("the coordinator's half of the recovery wire", () => {
  it('rejects reports this build cannot read: an unknown mode or state, a missing request', () => {
    const badMode = create(FissServerReportSchema, { machine: 1, clients: [{ lid: 1, request: { mid: 1, task: 1, mode: LockMode.UNSPECIFIED }, state: 1 }] });
    expect(() => serverReportFromWire(badMode, 'test')).toThrow(/mode/);
    const badState = create(FissServerReportSchema, { machine: 1, clients: [{ lid: 1, request: { mid: 1, task: 1, mode: LockMode.SHARED }, state: 9 as FissClientState }] });
    expect(() => serverReportFromWire(badState, 'test')).toThrow(/state/);
    const noRequest = create(FissServerReportSchema, { machine: 1, clients: [{ lid: 1, state: 1 }] });
    expect(() => serverReportFromWire(noRequest, 'test')).toThrow(FissWireError);
    const good = create(FissServerReportSchema, { machine: 1, agents: [{ lid: 2, machine: 1, mode: LockMode.SHARED, holders: [{ mid: 1, task: 3 }], pending: true }] });
    expect(serverReportFromWire(good, 'test').agents).toStrictEqual([{ lid: 2, machine: 1, mode: 'shared', holders: [{ mid: 1, task: 3 }], wqueue: [], state: 'pending' }]);
  });
});
