import type { Grant, LockClient } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { HistoryRecorder } from './history.js';
import { recordedClient } from './recorded-client.js';
import { checkHistory } from './verdict.js';

class Refused extends Error {
  override readonly name = 'Refused';
}

describe('recordedClient', () => {
  it('writes invoke and outcome of every call, failures with the error name, and rethrows', async () => {
    let t = 0;
    const held = new Set<number>();
    const inner: LockClient<Grant> = {
      async acquire(lock, mode) {
        t += 10;
        if (held.has(lock)) throw new Refused('busy');
        held.add(lock);
        return { lock, mode };
      },
      async release(grant) {
        t += 10;
        held.delete(grant.lock);
      },
    };
    const history = new HistoryRecorder();
    const a = recordedClient(inner, '1/0', history, () => t);
    const b = recordedClient(inner, '1/1', history, () => t);
    const grant = await a.acquire(3, 'exclusive', 1);
    await expect(b.acquire(3, 'exclusive', 1)).rejects.toThrow(Refused);
    await a.release(grant);
    const events = history.events();
    expect(events.map((e) => `${e.client} ${e.op} ${e.phase}${e.error ? ` ${e.error}` : ''}`)).toEqual([
      '1/0 acquire invoke',
      '1/0 acquire ok',
      '1/1 acquire invoke',
      '1/1 acquire fail Refused',
      '1/0 release invoke',
      '1/0 release ok',
    ]);
    expect(checkHistory(history).ok).toBe(true);
  });
});
