import { create } from '@bufbuild/protobuf';
import { LockFabricError } from '@lockfabric/ports';
import type { ClientRequestState, MachineOrders, QueuedRequest, RepairedAgent, ServerReport } from '@lockfabric/lock-fisslock';
import { EnumMapping, FissClientState, FissRequestRefSchema, FissServerReportSchema, lockModes } from '@lockfabric/wire';
import type { FissMachineOrders, FissRequestRef, FissServerReport } from '@lockfabric/wire';

/**
 * The compute node's half of the FissLock recovery wire forms (control.proto, "FissLock
 * recovery"): its S1 report out, its S2 orders in. The coordinator's half (apps/coordinator
 * fisslock-recovery/fiss-wire.ts) does the reverse; e2e/tests/live-fisslock-recovery-wire.test.ts
 * checks that the two agree. Decoding throws on modes this build does not know and on missing
 * request references.
 */

export type FissVerb = 'pause' | 'report' | 'apply' | 'resume';

const clientStates = new EnumMapping<ClientRequestState, FissClientState>('fisslock client state', [
  ['granted', FissClientState.GRANTED],
  ['pending', FissClientState.PENDING],
  ['aborting', FissClientState.ABORTING],
]);

/** A recovery request this build cannot read. */
export class FissOrdersError extends LockFabricError {
  readonly code = 'FISS_ORDERS';
  constructor(
    readonly source: string,
    detail: string,
  ) {
    super(`${source}: ${detail}`);
  }
}

function refToWire(r: { mid: number; task: number; mode?: QueuedRequest['mode'] }): FissRequestRef {
  return create(FissRequestRefSchema, { mid: r.mid, task: r.task, ...(r.mode === undefined ? {} : { mode: lockModes.toWire(r.mode) }) });
}

function queuedFromWire(r: FissRequestRef | undefined, source: string): QueuedRequest {
  if (!r) throw new FissOrdersError(source, 'a request reference is missing');
  return { mid: r.mid, task: r.task, mode: lockModes.fromWire(r.mode, source) };
}

export function serverReportToWire(report: ServerReport): FissServerReport {
  return create(FissServerReportSchema, {
    machine: report.machine,
    agents: report.agents.map((a) => ({
      lid: a.lid,
      machine: a.machine,
      mode: lockModes.toWire(a.mode),
      holders: a.holders.map(refToWire),
      wqueue: a.wqueue.map(refToWire),
      pending: a.state === 'pending',
    })),
    clients: report.clients.map((c) => ({ lid: c.lid, request: refToWire(c), state: clientStates.toWire(c.state), startNs: BigInt(Math.round(c.startNs)) })),
  });
}

/** The agents are installed on the machine the orders are for (the receiver). */
export function machineOrdersFromWire(wire: FissMachineOrders, source: string): MachineOrders {
  const agents: RepairedAgent[] = wire.agents.map((a) => ({
    lid: a.lid,
    machine: wire.machine,
    mode: lockModes.fromWire(a.mode, source),
    holders: a.holders.map((h) => queuedFromWire(h, source)),
    wqueue: a.wqueue.map((w) => queuedFromWire(w, source)),
    inca: 0,
  }));
  return {
    machine: wire.machine,
    agents,
    wake: wire.wake.map((w) => ({ lid: w.lid, ...queuedFromWire(w.request, source) })),
    abort: wire.abort.map((a) => {
      if (!a.request) throw new FissOrdersError(source, 'an abort order names no request');
      return { lid: a.lid, mid: a.request.mid, task: a.request.task, reason: a.reason };
    }),
  };
}
