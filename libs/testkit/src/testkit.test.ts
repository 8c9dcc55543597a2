import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort, waitFor, WaitForTimeoutError } from './index.js';

describe('freePort', () => {
  it('returns a port a server can then listen on', async () => {
    const port = await freePort();
    expect(port).toBeGreaterThan(0);
    const server = createServer();
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
    await new Promise((resolve) => server.close(resolve));
  });
});

describe('waitFor', () => {
  it('returns the first truthy value, treating throws as "not yet"', async () => {
    let calls = 0;
    const value = await waitFor(() => {
      calls++;
      if (calls < 3) throw new Error('not ready');
      return calls === 4 && { calls };
    });
    expect(value).toEqual({ calls: 4 });
  });

  it('times out with what it waited for and the last error', async () => {
    const waiting = waitFor(
      () => {
        throw new Error('still closed');
      },
      { timeoutMs: 30, intervalMs: 5, what: 'the door to open' },
    );
    await expect(waiting).rejects.toThrow(WaitForTimeoutError);
    await expect(waiting).rejects.toThrow('timed out after 30 ms waiting for the door to open; last check threw: still closed');
  });
});
