import { LockServer, ServerLockClient } from '@lockfabric/lock-srvlock';
import type { ServerGrant } from '@lockfabric/lock-srvlock';
import { parLockHome } from '@lockfabric/lock-parlock';
import type { DeadlineOptions, NodeServiceContext } from '@lockfabric/locks-common';
import { NS_PER_MS } from '@lockfabric/ports';
import type { AcquireOptions, ClientPorts, LockId, SwitchPort } from '@lockfabric/ports';
import { DEFAULT_INGRESS_STAGES, DEFAULT_MAU_CAPACITY_BITS } from '@lockfabric/switch';
import { lockCapacity } from './switch/capacity.js';

/**
 * Locks beyond the switch's capacity (spec §6.6): served by ParLock-style lock managers, one per
 * compute node, each owning the locks homed on it; the decider only routes their packets. The
 * fallback parts see only packets of out-of-range locks, and the agent pool only the others, since
 * both speak in the same packet types on the same machine link.
 */

/**
 * The switch's capacity when the protocol options do not name one: the MAU formula for the
 * default pipeline (12 MAUs of 560 000 bytes, FissLock §5.2): 1 680 000 locks.
 */
export const DEFAULT_SWITCH_CAPACITY = lockCapacity(DEFAULT_INGRESS_STAGES, DEFAULT_MAU_CAPACITY_BITS);

export function switchCapacityOf(ports: ClientPorts, configured: number): number {
  return configured > 0 ? configured : Math.min(ports.locks.lockCount, DEFAULT_SWITCH_CAPACITY);
}

/** `port` narrowed to packets of out-of-range locks (ids ≥ `capacity`). */
export function fallbackPort(port: SwitchPort, capacity: number): SwitchPort {
  return {
    machine: port.machine,
    send: (packet) => port.send(packet),
    onPacket: (handler) => port.onPacket((packet) => (packet.lock >= capacity ? handler(packet) : undefined)),
  };
}

function narrowed<T extends { switchPort?: SwitchPort }>(ports: T, capacity: number): T {
  return ports.switchPort ? { ...ports, switchPort: fallbackPort(ports.switchPort, capacity) } : ports;
}

/** The fallback lock manager of one compute node (ParLock's `LockServer`). */
export function startFallbackManager(context: NodeServiceContext, capacity: number): LockServer {
  return new LockServer({ ...context, ports: narrowed(context.ports, capacity) }, { managesLocks: true });
}

/** A client of the fallback managers: home-local requests by node-local message, the rest by packet. */
export function fallbackClient(ports: ClientPorts, capacity: number, retransmitNs = 5 * NS_PER_MS): ServerLockClient {
  return new ServerLockClient(narrowed(ports, capacity), {
    protocol: 'fisslock',
    retransmitNs,
    retransmitAcquire: true,
    maxAttempts: 50,
    pushBackNs: 0,
    route: (lock: LockId, nodes, self) => {
      const home = parLockHome(lock, nodes);
      return home === self ? { kind: 'local' } : { kind: 'packet', dst: home };
    },
  });
}

export type FallbackGrant = ServerGrant;

/**
 * `options` for the fallback client, which takes a real AbortSignal: a StopSignal (the recoverable
 * client's Stopper) is forwarded to an AbortController made for this acquire, and `end` lets go of
 * it. Only out-of-range locks pay for that controller; a caller's AbortSignal passes as it is.
 */
export function fallbackOptions(options: DeadlineOptions | undefined): { readonly options: AcquireOptions | undefined; end(): void } {
  const signal = options?.signal;
  const timeout = options?.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs };
  if (signal === undefined) return { options: timeout, end: () => undefined };
  if (signal instanceof AbortSignal) return { options: { ...timeout, signal }, end: () => undefined };
  const controller = new AbortController();
  const forward = (): void => controller.abort(signal.reason);
  if (signal.aborted) forward();
  else signal.addEventListener('abort', forward);
  return { options: { ...timeout, signal: controller.signal }, end: () => signal.removeEventListener('abort', forward) };
}
