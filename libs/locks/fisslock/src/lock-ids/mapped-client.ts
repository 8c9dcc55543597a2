import { AcquireDeadline } from '@lockfabric/locks-common';
import { LockAbortedError, LockTimeoutError, NS_PER_MS } from '@lockfabric/ports';
import type { AcquireOptions, ClientPorts, LockClient, LockId, LockMode } from '@lockfabric/ports';
import type { FissGrant } from '../client.js';
import type { FissLockOptions } from '../options.js';
import { LockIdMapError } from './id-map-error.js';
import { LockIdResolver } from './lock-id-resolver.js';
import type { LockIdTraffic } from './lock-id-resolver.js';

/**
 * FissLock with sparse application lock ids (lockIds=mapped, spec §6.5): each acquire first turns
 * the application id into its register index (lid) through the client's cache and the id-map
 * daemon, then runs the FissLock client on the lid, so packets, agents, the decider, the ParLock
 * fallback and recovery all see lids. Callers see application ids only: grants carry the
 * application id in `lock` (and the lid in `lid`), and the errors an acquire ends with name it.
 */
export class MappedFissLockClient implements LockClient<FissGrant> {
  readonly resolver: LockIdResolver;

  constructor(
    private readonly inner: LockClient<FissGrant>,
    private readonly ports: ClientPorts,
    options: Pick<FissLockOptions, 'idMapRetryNs' | 'idMapAttempts'>,
  ) {
    this.resolver = new LockIdResolver(ports, { retryNs: options.idMapRetryNs, attempts: options.idMapAttempts });
  }

  get traffic(): Readonly<LockIdTraffic> {
    return this.resolver.traffic;
  }

  async acquire(lock: LockId, mode: LockMode, options?: AcquireOptions): Promise<FissGrant> {
    // one deadline for the lookup and the acquire together
    const deadline = new AcquireDeadline(this.ports.clock, lock, mode, options);
    const lid = await this.resolver.resolve(lock, deadline, options?.signal);
    deadline.check();
    const remainingMs = deadline.remainingNs() / NS_PER_MS;
    const inner: AcquireOptions = { ...(Number.isFinite(remainingMs) ? { timeoutMs: remainingMs } : {}), ...(options?.signal ? { signal: options.signal } : {}) };
    try {
      const grant = await this.inner.acquire(lid, mode, inner);
      return { ...grant, lock, lid };
    } catch (error) {
      throw relabelled(error, lock, mode, options?.timeoutMs);
    }
  }

  release(grant: FissGrant): Promise<void> {
    const lid = grant.lid ?? this.resolver.cached(grant.lock);
    if (lid === undefined) return Promise.reject(new LockIdMapError(grant.lock, 'no-service', 'this client never mapped the lock id of the grant it was asked to release'));
    return this.inner.release({ ...grant, lock: lid });
  }
}

/** The acquire's typed errors name the application id the caller asked for, not the lid. */
function relabelled(error: unknown, lock: LockId, mode: LockMode, timeoutMs: number | undefined): unknown {
  if (error instanceof LockTimeoutError) return new LockTimeoutError(lock, mode, timeoutMs ?? error.timeoutMs);
  if (error instanceof LockAbortedError) return new LockAbortedError(lock, error.reason);
  return error;
}
