import type { AcquireDeadline } from '@lockfabric/locks-common';
import { SERVICE_CLIENT } from '@lockfabric/locks-common';
import type { ClientPorts, LockId, Message } from '@lockfabric/ports';
import { LockIdMapError } from './id-map-error.js';
import { idMapOf } from './id-map-registry.js';
import { ID_MAP_ERROR, decodeReply, mapRequest, replyLockId } from './id-map-wire.js';

/** A client's id-map traffic (like ServerLockClient's `traffic`), for tests and reports. */
export interface LockIdTraffic {
  /** Lookups that missed the cache and asked the daemon (one per new id, retries not counted). */
  lookups: number;
  cacheHits: number;
  /** Requests sent, first sends and resends. */
  requestsSent: number;
  retries: number;
  /** Late duplicate replies taken out of the mailbox after their lookup had ended. */
  staleReplies: number;
}

export interface LockIdResolverOptions {
  readonly retryNs: number;
  readonly attempts: number;
}

/**
 * A client's cache in front of the id-map daemon (spec §6.5: "clients cache the mapping"). A miss
 * sends a request to the daemon and waits for its reply until the acquire's deadline; a request
 * with no reply within `retryNs` (doubling per attempt) is resent, and after `attempts` sends the
 * daemon counts as unreachable. The cache holds only ids the daemon mapped, so it is bounded by
 * the daemon's own table bound.
 */
export class LockIdResolver {
  readonly traffic: LockIdTraffic = { lookups: 0, cacheHits: 0, requestsSent: 0, retries: 0, staleReplies: 0 };
  private readonly cache = new Map<number, LockId>();
  /** Ids with a lookup under way (count per id): their replies must stay in the mailbox. */
  private readonly inFlight = new Map<number, number>();

  constructor(
    private readonly ports: Pick<ClientPorts, 'self' | 'mailbox' | 'clock' | 'locks'>,
    private readonly options: LockIdResolverOptions,
  ) {}

  cached(appLockId: number): LockId | undefined {
    return this.cache.get(appLockId);
  }

  async resolve(appLockId: number, deadline: AcquireDeadline, signal?: AbortSignal): Promise<LockId> {
    const hit = this.cache.get(appLockId);
    if (hit !== undefined) {
      this.traffic.cacheHits++;
      return hit;
    }
    this.traffic.lookups++;
    this.inFlight.set(appLockId, (this.inFlight.get(appLockId) ?? 0) + 1);
    try {
      return await this.ask(appLockId, deadline, signal);
    } finally {
      const left = (this.inFlight.get(appLockId) ?? 1) - 1;
      if (left > 0) this.inFlight.set(appLockId, left);
      else this.inFlight.delete(appLockId);
      await this.dropStaleReplies();
    }
  }

  private async ask(appLockId: number, deadline: AcquireDeadline, signal: AbortSignal | undefined): Promise<LockId> {
    const { mailbox, clock } = this.ports;
    const host = idMapOf(this.ports.locks, this.ports.self.node)?.host;
    if (host === undefined) throw new LockIdMapError(appLockId, 'no-service', `machine ${this.ports.self.node} runs no fisslock node service with lockIds=mapped`);
    const isReply = (message: Message): boolean => replyLockId(message) === appLockId;
    let waitNs = this.options.retryNs;
    for (let attempt = 1; ; attempt++) {
      deadline.check();
      mailbox.send(mapRequest({ node: host, client: SERVICE_CLIENT }, appLockId));
      this.traffic.requestsSent++;
      const reply = await mailbox.receive(isReply, { deadlineNs: Math.min(deadline.atNs, clock.nowNs() + waitNs), ...(signal ? { signal } : {}) });
      const decoded = reply ? decodeReply(reply) : undefined;
      if (decoded?.kind === 'mapped') {
        this.cache.set(appLockId, decoded.lid);
        return decoded.lid;
      }
      if (decoded?.kind === 'error') {
        throw new LockIdMapError(appLockId, decoded.code === ID_MAP_ERROR.full ? 'full' : 'refused', `node ${host}: ${decoded.detail}`);
      }
      // a concurrent lookup of the same id by this client may have taken the reply
      const cached = this.cache.get(appLockId);
      if (cached !== undefined) return cached;
      if (attempt >= this.options.attempts) {
        deadline.check();
        throw new LockIdMapError(appLockId, 'unreachable', `no reply from node ${host} to ${attempt} request(s)`);
      }
      this.traffic.retries++;
      waitNs *= 2;
    }
  }

  /** Duplicate replies (a resent request answered twice) would otherwise sit in the bounded mailbox for good. */
  private async dropStaleReplies(): Promise<void> {
    const stale = (message: Message): boolean => {
      const id = replyLockId(message);
      return id !== undefined && !this.inFlight.has(id);
    };
    while (await this.ports.mailbox.receive(stale, { deadlineNs: this.ports.clock.nowNs() })) this.traffic.staleReplies++;
  }
}
