import { FLAG_CANCEL, FLAG_CONTINUE, FLAG_SWITCH } from '@lockfabric/lock-srvlock';
import { Stopper } from '@lockfabric/ports';
import type { ClientPorts, LockPacket, SwitchPort } from '@lockfabric/ports';
import { nextResendNs } from './resend-backoff.js';
import type { ResendConfig } from './resend-backoff.js';
import { NETLOCK_FLAG_GONE } from './switch-program/queue-state.js';

/** Requests one client's ledger remembers; past this the oldest finished one is forgotten first. */
export const REQUEST_LEDGER_BOUND = 1_024;

export type RequestLedgerConfig = ResendConfig;

/** What the ledger did, for tests. */
export interface RequestLedgerStats {
  /** Switch GRANTs dropped because the request already holds that entry (a resent or duplicated GRANT). */
  duplicates: number;
  /** GRANTs of an entry nobody waits for (a second entry of a request, or a cancelled request): released here. */
  strays: number;
  /** Cancels re-sent to ask the switch about a timed-out request. */
  polls: number;
  givenUp: number;
}

type State = 'waiting' | 'held' | 'cancelled' | 'done';

interface Request {
  state: State;
  /** PUSH-BACKs received: the try the switch knows the request by (its register key). */
  attempt: number;
  /** The slot tag of the entry this request holds or held. */
  tag: number;
  /** `ServerLockClient` sent a cancel and waits for its ACK. */
  clientAwaitsAck: boolean;
  /** Ends the poll of a cancelled request (a Stopper: one per cancel, no AbortController). */
  poll?: Stopper;
}

/**
 * NetLock's client half of "a lost GRANT costs time, never a lock". `ServerLockClient` resends an
 * unanswered ACQUIRE; the switch recognises a request already queued by its per-request register
 * and sends a granted one's GRANT again (README, "Lost GRANTs and NOTIFYs"). This port wrapper
 * keeps per request what the switch needs and what the shared client does not track:
 *
 * - It stamps each ACQUIRE and cancel with the request's attempt (its PUSH-BACK count) in
 *   `incarnation`, so a try the full queue refused is never taken for a queued one. A PUSH-BACK
 *   counts only when it answers the current try (it carries the try's attempt back).
 * - A GRANT of an entry the request already holds is dropped (a resent or duplicated GRANT). A GRANT
 *   nobody waits for (a second entry, or one of a cancelled request) is released here by its tag.
 * - A cancelled request the switch still queues is asked about again (the cancel, resent with a
 *   doubling interval) until the switch sends its GRANT, which is released, or says GONE.
 *
 * Sits between `withSlotEcho` (outside) and `withReliableRelease` (inside), so its own releases
 * carry the tag and are resent until acknowledged. Bounded by {@link REQUEST_LEDGER_BOUND}.
 */
export function withRequestLedger(ports: ClientPorts, config: RequestLedgerConfig, stats: RequestLedgerStats = { duplicates: 0, strays: 0, polls: 0, givenUp: 0 }): ClientPorts {
  const inner = ports.switchPort;
  if (!inner) return ports;
  const self = ports.self;
  const requests = new Map<number, Request>();

  const resolve = (r: Request) => {
    if (r.state === 'cancelled') r.poll?.stop('resolved');
    r.state = 'done';
  };

  const remember = (rid: number, r: Request) => {
    requests.set(rid, r);
    if (requests.size <= REQUEST_LEDGER_BOUND) return;
    let victim: number | undefined;
    for (const [id, old] of requests) {
      if (old.state === 'done') {
        victim = id;
        break;
      }
    }
    victim ??= requests.keys().next().value as number;
    const old = requests.get(victim) as Request;
    resolve(old);
    requests.delete(victim);
  };

  const release = (packet: LockPacket) => {
    // A reader's CONTINUE is reflected first, so the readers behind it are not kept waiting.
    if ((packet.flags & FLAG_CONTINUE) !== 0) inner.send({ type: 'notify', lock: packet.lock, machine: self.node, task: self.client, mode: 'shared', incarnation: packet.incarnation, seq: 0, flags: FLAG_SWITCH });
    inner.send({ type: 'release', lock: packet.lock, machine: self.node, task: self.client, mode: packet.mode, incarnation: packet.incarnation, seq: packet.seq, flags: 0 });
  };

  const poll = async (r: Request, template: LockPacket, stop: Stopper) => {
    let waitNs = config.retransmitNs;
    for (let attempt = 0; attempt < config.maxAttempts; attempt++) {
      try {
        await ports.clock.sleep(waitNs, stop);
      } catch {
        return;
      }
      if (stop.aborted || r.state !== 'cancelled') return;
      stats.polls++;
      inner.send({ ...template, incarnation: r.attempt });
      waitNs = nextResendNs(config, waitNs);
    }
    if (r.state === 'cancelled') {
      stats.givenUp++;
      resolve(r);
    }
  };

  const port: SwitchPort = {
    machine: inner.machine,
    send(packet: LockPacket) {
      if (packet.task !== self.client) return inner.send(packet);
      if (packet.type === 'acquire') {
        let r = requests.get(packet.seq);
        if (!r) {
          r = { state: 'waiting', attempt: 0, tag: 0, clientAwaitsAck: false };
          remember(packet.seq, r);
        }
        return inner.send({ ...packet, incarnation: r.attempt });
      }
      if (packet.type === 'release' && (packet.flags & FLAG_CANCEL) !== 0) {
        let r = requests.get(packet.seq);
        if (!r) {
          r = { state: 'waiting', attempt: 0, tag: 0, clientAwaitsAck: false };
          remember(packet.seq, r);
        }
        r.clientAwaitsAck = true;
        if (r.state === 'waiting') {
          r.state = 'cancelled';
          const stop = new Stopper();
          r.poll = stop;
          void poll(r, packet, stop);
        }
        return inner.send({ ...packet, incarnation: r.attempt });
      }
      if (packet.type === 'release') {
        const r = requests.get(packet.seq);
        if (r) {
          if (packet.incarnation !== 0) r.tag = packet.incarnation;
          resolve(r);
        }
      }
      inner.send(packet);
    },
    onPacket(handler) {
      return inner.onPacket((packet) => {
        if (packet.task !== self.client) return handler(packet);
        const r = requests.get(packet.seq);
        const viaSwitch = (packet.flags & FLAG_SWITCH) !== 0;
        if (packet.type === 'push-back') {
          // Only the answer to the current try counts: a late one for an older try (reordered, or
          // answering a resend of it) would move the request to a new key while its entry is queued.
          if (r?.state !== 'waiting' || packet.incarnation !== r.attempt) return;
          r.attempt++;
          return handler(packet);
        }
        if (packet.type === 'ack') {
          if (!r) return handler(packet);
          // The lock server's answer to a cancel, or the switch's GONE, is final.
          if (r.state === 'cancelled' && (!viaSwitch || (packet.flags & NETLOCK_FLAG_GONE) !== 0)) resolve(r);
          // The ledger's own polls are answered too: only the answer the client waits for goes up.
          if (viaSwitch && !r.clientAwaitsAck) return;
          r.clientAwaitsAck = false;
          return handler(packet);
        }
        if (packet.type !== 'grant' || !viaSwitch) return handler(packet);
        if (r?.state === 'waiting') {
          r.state = 'held';
          r.tag = packet.incarnation;
          return handler(packet);
        }
        if (r && (r.state === 'held' || r.state === 'done') && r.tag === packet.incarnation) {
          stats.duplicates++;
          return;
        }
        // Nobody waits for this entry: a cancelled request's, or a second entry of a request.
        stats.strays++;
        if (r?.state === 'cancelled') {
          r.tag = packet.incarnation;
          resolve(r);
        }
        release(packet);
      });
    },
  };
  return { ...ports, switchPort: port };
}
