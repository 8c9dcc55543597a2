import { create } from '@bufbuild/protobuf';
import { LockFabricError } from '@lockfabric/ports';
import type { AgentRecord, ClientRecord, ClientRequestState, MachineOrders, QueuedRequest, RepairedAgent, ServerReport } from '@lockfabric/lock-fisslock';
import { EnumMapping, FissClientState, FissMachineOrdersSchema, FissRequestRefSchema, FissServerReportSchema, lockModes } from '@lockfabric/wire';
import type { FissMachineOrders, FissRequestRef, FissServerReport } from '@lockfabric/wire';

/**
 * The FissLock recovery wire forms (control.proto, "FissLock recovery"), both halves: the
 * coordinator sends S2 orders and reads S1 reports; a compute node sends its report and reads its
 * orders. Decoding throws FissWireError on modes or states this build does not know and on missing
 * request references.
 */

const clientStates = new EnumMapping<ClientRequestState, FissClientState>('fisslock client state', [
  ['granted', FissClientState.GRANTED],
  ['pending', FissClientState.PENDING],
  ['aborting', FissClientState.ABORTING],
]);

export class FissWireError extends LockFabricError {
  readonly code = 'FISS_WIRE';
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
  if (!r) throw new FissWireError(source, 'a request reference is missing');
  return { mid: r.mid, task: r.task, mode: lockModes.fromWire(r.mode, source) };
}

export function serverReportFromWire(wire: FissServerReport, source: string): ServerReport {
  const agents: AgentRecord[] = wire.agents.map((a) => ({
    lid: a.lid,
    machine: a.machine,
    mode: lockModes.fromWire(a.mode, source),
    holders: a.holders.map((h) => ({ mid: h.mid, task: h.task })),
    wqueue: a.wqueue.map((w) => queuedFromWire(w, source)),
    state: a.pending ? 'pending' : 'live',
  }));
  const clients: ClientRecord[] = wire.clients.map((c) => ({ lid: c.lid, ...queuedFromWire(c.request, source), state: clientStates.fromWire(c.state, source), startNs: Number(c.startNs) }));
  return { machine: wire.machine, agents, clients };
}

export function machineOrdersToWire(orders: MachineOrders): FissMachineOrders {
  return create(FissMachineOrdersSchema, {
    machine: orders.machine,
    agents: orders.agents.map((a) => ({ lid: a.lid, mode: lockModes.toWire(a.mode), holders: a.holders.map(refToWire), wqueue: a.wqueue.map(refToWire) })),
    wake: orders.wake.map((w) => ({ lid: w.lid, request: refToWire(w) })),
    abort: orders.abort.map((a) => ({ lid: a.lid, request: refToWire({ mid: a.mid, task: a.task }), reason: a.reason })),
  });
}

/** A compute node's S1 report, as it sends it. */
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

/** A compute node's S2 orders, as it reads them; the agents are installed on the machine the orders are for (the receiver). */
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
      if (!a.request) throw new FissWireError(source, 'an abort order names no request');
      return { lid: a.lid, mid: a.request.mid, task: a.request.task, reason: a.reason };
    }),
  };
}
