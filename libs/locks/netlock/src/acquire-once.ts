import { FLAG_CANCEL } from '@lockfabric/lock-srvlock';
import type { ClientPorts, LockPacket, SwitchPort } from '@lockfabric/ports';

/** Requests of one client awaiting an answer at once is small (one per outstanding acquire); past this the oldest is forgotten. */
export const ACQUIRE_ONCE_BOUND = 1_024;

/** What the guard did, for tests and counters. */
export interface AcquireOnceStats {
  /** ACQUIREs dropped because the same request was already in flight or queued. */
  suppressed: number;
}

/**
 * NetLock's client-side half of "one queue entry per request": an ACQUIRE leaves only when its
 * request (`seq`, the request id) has no ACQUIRE in flight, i.e. first, or after a PUSH-BACK
 * answered the previous one (the full queue did not take it). Any repeat is dropped here.
 *
 * Why (README, "Locks never granted again", cause 1): a switch queue takes every ACQUIRE it has
 * room for and cannot find a duplicate without reading the whole queue. `ServerLockClient`
 * resends an ACQUIRE whenever its wait ends with no answer before the deadline, and the live
 * clock's timers may wake a fraction of a millisecond early, so a wait that timed out sent the
 * request a second time. The client withdrew it once and released its first grant only, so the
 * second entry was granted to nobody and the lock stopped for good. A port wrapper, like
 * `withSlotEcho`, because the shared client builds the packets.
 *
 * The entry is forgotten on the request's PUSH-BACK, GRANT or ACK, or when the client cancels it
 * (after a cancel the client sends no ACQUIRE for that request). Bounded by
 * {@link ACQUIRE_ONCE_BOUND}.
 */
export function withAcquireOnce(ports: ClientPorts, stats: AcquireOnceStats = { suppressed: 0 }): ClientPorts {
  const inner = ports.switchPort;
  if (!inner) return ports;
  const self = ports.self.client;
  /** Requests whose last ACQUIRE has no answer yet (queued in the switch, or on the way). */
  const pending = new Set<number>();
  const port: SwitchPort = {
    machine: inner.machine,
    send(packet: LockPacket) {
      if (packet.task === self && packet.type === 'acquire') {
        if (pending.has(packet.seq)) {
          stats.suppressed++;
          return;
        }
        pending.add(packet.seq);
        if (pending.size > ACQUIRE_ONCE_BOUND) pending.delete(pending.values().next().value as number);
      } else if (packet.task === self && packet.type === 'release' && (packet.flags & FLAG_CANCEL) !== 0) {
        pending.delete(packet.seq);
      }
      inner.send(packet);
    },
    onPacket(handler) {
      return inner.onPacket((packet) => {
        if (packet.task === self && (packet.type === 'push-back' || packet.type === 'grant' || packet.type === 'ack')) pending.delete(packet.seq);
        handler(packet);
      });
    },
  };
  return { ...ports, switchPort: port };
}
