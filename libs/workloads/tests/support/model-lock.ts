import { LockTimeoutError, NS_PER_MS } from '@lockfabric/ports';
import type { AcquireOptions, Clock, Grant, LockClient, LockId, LockMode } from '@lockfabric/ports';

interface Waiter {
  readonly mode: LockMode;
  readonly grant: () => void;
}

interface LockState {
  shared: number;
  exclusive: boolean;
  readonly queue: Waiter[];
}

/**
 * An in-memory reader-writer lock service with FIFO queues and a fixed one-way delay, standing in
 * for a protocol in runner tests. `ignoreConflicts` makes it a mutant that grants at once.
 */
export class ModelLockService {
  private readonly locks = new Map<LockId, LockState>();

  constructor(
    private readonly clock: Clock,
    private readonly options: { readonly delayNs: number; readonly ignoreConflicts?: boolean },
  ) {}

  client(): LockClient {
    return {
      acquire: (lock, mode, options) => this.acquire(lock, mode, options),
      release: (grant) => this.release(grant),
    };
  }

  private state(lock: LockId): LockState {
    let state = this.locks.get(lock);
    if (!state) {
      state = { shared: 0, exclusive: false, queue: [] };
      this.locks.set(lock, state);
    }
    return state;
  }

  private async acquire(lock: LockId, mode: LockMode, options?: AcquireOptions): Promise<Grant> {
    await this.clock.sleep(this.options.delayNs);
    const state = this.state(lock);
    let granted = false;
    let onGrant: () => void = () => {};
    const grantedNow = new Promise<void>((resolve) => (onGrant = resolve));
    const waiter: Waiter = {
      mode,
      grant: () => {
        granted = true;
        onGrant();
      },
    };
    state.queue.push(waiter);
    this.serve(state);
    if (!granted && options?.timeoutMs !== undefined) {
      const timedOut = this.clock.sleep(options.timeoutMs * NS_PER_MS).then(() => 'timeout' as const);
      const outcome = await Promise.race([grantedNow.then(() => 'granted' as const), timedOut]);
      if (outcome === 'timeout' && !granted) {
        state.queue.splice(state.queue.indexOf(waiter), 1);
        this.serve(state);
        throw new LockTimeoutError(lock, mode, options.timeoutMs);
      }
    } else {
      await grantedNow;
    }
    await this.clock.sleep(this.options.delayNs);
    return { lock, mode };
  }

  private async release(grant: Grant): Promise<void> {
    await this.clock.sleep(this.options.delayNs);
    const state = this.state(grant.lock);
    if (grant.mode === 'exclusive') state.exclusive = false;
    else state.shared--;
    this.serve(state);
    await this.clock.sleep(this.options.delayNs);
  }

  private serve(state: LockState): void {
    for (let head = state.queue[0]; head; head = state.queue[0]) {
      const compatible = this.options.ignoreConflicts || (!state.exclusive && (head.mode === 'shared' || state.shared === 0));
      if (!compatible) return;
      state.queue.shift();
      if (head.mode === 'exclusive') state.exclusive = true;
      else state.shared++;
      head.grant();
    }
  }
}
