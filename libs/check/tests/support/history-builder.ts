import type { LockMode } from '@lockfabric/ports';
import type { HistoryEvent, HistoryOp } from '../../src/history.js';

/** Terse handmade histories: times are explicit, events are sorted (stably) when built. */
export class HistoryBuilder {
  private readonly list: HistoryEvent[] = [];

  event(client: string, op: HistoryOp, lock: number, mode: LockMode, phase: HistoryEvent['phase'], timeNs: number, error?: string): this {
    this.list.push(error === undefined ? { client, op, lock, mode, phase, timeNs } : { client, op, lock, mode, phase, timeNs, error });
    return this;
  }

  /** Acquire invoked at `invokeNs`, granted at `okNs`. */
  acquire(client: string, lock: number, mode: LockMode, invokeNs: number, okNs: number): this {
    return this.event(client, 'acquire', lock, mode, 'invoke', invokeNs).event(client, 'acquire', lock, mode, 'ok', okNs);
  }

  /** Acquire invoked at `invokeNs` that failed at `failNs`. */
  acquireFails(client: string, lock: number, mode: LockMode, invokeNs: number, failNs: number, error = 'LockTimeoutError'): this {
    return this.event(client, 'acquire', lock, mode, 'invoke', invokeNs).event(client, 'acquire', lock, mode, 'fail', failNs, error);
  }

  release(client: string, lock: number, mode: LockMode, invokeNs: number, okNs: number): this {
    return this.event(client, 'release', lock, mode, 'invoke', invokeNs).event(client, 'release', lock, mode, 'ok', okNs);
  }

  /** A whole operation: recorded hold is [startNs, endNs]; invoke 1 ns before, release ok 1 ns after. */
  hold(client: string, lock: number, mode: LockMode, startNs: number, endNs: number): this {
    return this.acquire(client, lock, mode, startNs - 1, startNs).release(client, lock, mode, endNs, endNs + 1);
  }

  build(): HistoryEvent[] {
    return this.list.slice().sort((a, b) => a.timeNs - b.timeNs);
  }
}
