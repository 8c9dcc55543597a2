import { FLAG_CANCEL, FLAG_SWITCH } from '@lockfabric/lock-srvlock';
import type { ClientPorts, LockPacket, SwitchPort } from '@lockfabric/ports';

/** Switch grants a client holds at once is small (one per outstanding acquire); past this the oldest tag is forgotten. */
export const SLOT_ECHO_BOUND = 1_024;

/**
 * NetLock's client-side half of "a release names its entry": a switch GRANT carries the grantee's
 * queue slot as a tag (`incarnation`), and this port wrapper copies that tag into the client's
 * RELEASE of the same request (same `seq`, the request id). The switch marks that slot released
 * instead of taking the queue head, so readers may release in any order and the slots of the
 * granted run keep naming their holders (what a purge needs after a node dies; README).
 *
 * It wraps the port rather than the client because `ServerLockClient` (shared with SrvLock and
 * ParLock) builds its packets itself; a cancel (FLAG_CANCEL) and every packet of a cold lock pass
 * unchanged. Bounded: a tag is dropped when its release is sent, and the oldest past
 * {@link SLOT_ECHO_BOUND} (a release without a tag is still counted by the switch).
 */
export function withSlotEcho(ports: ClientPorts): ClientPorts {
  const inner = ports.switchPort;
  if (!inner) return ports;
  const self = ports.self.client;
  const tags = new Map<number, number>();
  const port: SwitchPort = {
    machine: inner.machine,
    send(packet: LockPacket) {
      const tag = packet.type === 'release' && packet.task === self && (packet.flags & FLAG_CANCEL) === 0 ? tags.get(packet.seq) : undefined;
      if (tag === undefined) return inner.send(packet);
      tags.delete(packet.seq);
      inner.send({ ...packet, incarnation: tag });
    },
    onPacket(handler) {
      return inner.onPacket((packet) => {
        if (packet.type === 'grant' && packet.task === self && (packet.flags & FLAG_SWITCH) !== 0 && packet.incarnation > 0) {
          tags.delete(packet.seq);
          tags.set(packet.seq, packet.incarnation);
          if (tags.size > SLOT_ECHO_BOUND) tags.delete(tags.keys().next().value as number);
        }
        handler(packet);
      });
    },
  };
  return { ...ports, switchPort: port };
}
