import { FLAG_CANCEL, FLAG_SWITCH } from '@lockfabric/lock-srvlock';
import { Stopper } from '@lockfabric/ports';
import type { ClientPorts, LockPacket, SwitchPort } from '@lockfabric/ports';
import { nextResendNs } from './resend-backoff.js';
import type { ResendConfig } from './resend-backoff.js';
import { NETLOCK_FLAG_RELEASED, slotOfTag } from './switch-program/queue-state.js';

/** Releases of one client awaiting the switch's ACK at once is small (one per grant just released); past this the oldest is given up. */
export const RELIABLE_RELEASE_BOUND = 1_024;

export type ReliableReleaseConfig = ResendConfig;

/** What the guard did, for tests. */
export interface ReliableReleaseStats {
  resent: number;
  acknowledged: number;
  givenUp: number;
}

/**
 * NetLock's client half of "a lost RELEASE costs time, never a lock": a RELEASE of a switch grant
 * (it carries the slot tag `withSlotEcho` put in) is kept and sent again, with a doubling interval,
 * until the switch acknowledges it (ACK with NETLOCK_FLAG_RELEASED and the same request id).
 * Before, a RELEASE lost to switch loss, a partition or a closed admission left its entry granted
 * for good (README). The switch acknowledges repeats too, and counts a release only once (the slot
 * remembers the serial released last), so a resend whose first copy did arrive is harmless.
 *
 * A port wrapper, because `ServerLockClient` (shared with SrvLock and ParLock) sends a switch
 * release once and forgets it; the ACK is consumed here and never reaches that client, whose
 * packet counts therefore stay the same. Must sit inside `withSlotEcho` (it sees the tagged
 * packet). Bounded by {@link RELIABLE_RELEASE_BOUND}.
 */
export function withReliableRelease(ports: ClientPorts, config: ReliableReleaseConfig, stats: ReliableReleaseStats = { resent: 0, acknowledged: 0, givenUp: 0 }): ClientPorts {
  const inner = ports.switchPort;
  if (!inner) return ports;
  const self = ports.self.client;
  /** Unacknowledged releases by request id; the Stopper (one per switch release) ends its resend loop. */
  const pending = new Map<number, Stopper>();

  const forget = (seq: number) => {
    pending.get(seq)?.stop('acknowledged');
    pending.delete(seq);
  };

  const resend = async (packet: LockPacket, stop: Stopper) => {
    let waitNs = config.retransmitNs;
    for (let attempt = 1; attempt < config.maxAttempts; attempt++) {
      try {
        await ports.clock.sleep(waitNs, stop);
      } catch {
        return; // acknowledged, or forgotten past the bound
      }
      if (stop.aborted) return;
      stats.resent++;
      inner.send(packet);
      waitNs = nextResendNs(config, waitNs);
    }
    try {
      await ports.clock.sleep(waitNs, stop);
    } catch {
      return;
    }
    if (!stop.aborted && pending.get(packet.seq) === stop) {
      pending.delete(packet.seq);
      stats.givenUp++;
    }
  };

  const port: SwitchPort = {
    machine: inner.machine,
    send(packet: LockPacket) {
      const switchRelease = packet.type === 'release' && packet.task === self && (packet.flags & FLAG_CANCEL) === 0 && slotOfTag(packet.incarnation) !== undefined;
      inner.send(packet);
      if (!switchRelease) return;
      forget(packet.seq);
      const stop = new Stopper();
      pending.set(packet.seq, stop);
      if (pending.size > RELIABLE_RELEASE_BOUND) forget(pending.keys().next().value as number);
      void resend(packet, stop);
    },
    onPacket(handler) {
      return inner.onPacket((packet) => {
        const ack = packet.type === 'ack' && packet.task === self && (packet.flags & FLAG_SWITCH) !== 0 && (packet.flags & NETLOCK_FLAG_RELEASED) !== 0;
        if (!ack) return handler(packet);
        if (pending.has(packet.seq)) stats.acknowledged++;
        forget(packet.seq);
      });
    },
  };
  return { ...ports, switchPort: port };
}
