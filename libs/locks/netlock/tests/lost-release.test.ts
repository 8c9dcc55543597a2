import { LockTimeoutError } from '@lockfabric/ports';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { createSwitchNet } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { netlock, netlockProgram } from '../src/index.js';
import { losing } from './losing-link.js';

/**
 * Readers 1 and 2 hold lock 7 (hot), writer 3 waits. Reader 1 loses one packet of its release
 * exchange (`lose`: its RELEASE, or the switch's ACK). Then both readers have released, and the
 * writer must be granted — after reader 2's release, never before it.
 */
async function scenario(lose: 'release' | 'ack', options?: ProtocolOptions) {
  // The switch half of a protocol option is applied where the program is built (harness, switch app).
  const countRepeats = options?.['mutantCountDuplicateRelease'] === 'true';
  const program = netlockProgram({ allocation: [{ lock: 7, base: 0, size: 8 }], ...(countRepeats ? { mutantCountDuplicateRelease: true } : {}) });
  const net = createSwitchNet({ seed: 3, computeNodes: [1, 2, 3], program });
  net.startServices(netlock, options);
  const lossy = losing(net.clientPorts({ node: 1, client: 0 }), (p) => p.lock === 7 && p.type === lose);
  const r1 = netlock.createClient(lossy, options);
  const r2 = netlock.createClient(net.clientPorts({ node: 2, client: 0 }), options);
  const w = netlock.createClient(net.clientPorts({ node: 3, client: 0 }), options);
  const log: string[] = [];
  const run = (async () => {
    const g1 = await r1.acquire(7, 'shared');
    const g2 = await r2.acquire(7, 'shared');
    const writer = w.acquire(7, 'exclusive', { timeoutMs: 2 }).then(
      (g) => (log.push('writer granted'), g),
      (error: unknown) => (log.push(error instanceof LockTimeoutError ? 'writer timed out' : String(error)), undefined),
    );
    await r1.release(g1);
    await net.clock.sleep(100_000); // 100 µs: ten first resend intervals (retransmitNs 10000)
    log.push('reader 2 releases');
    await r2.release(g2);
    const g = await writer;
    if (g) await w.release(g);
  })();
  await net.scheduler.run();
  await run;
  await net.stopServices();
  // Sends of reader 1's RELEASE, the lost one included (net.sent records what left the lossy link).
  const releasesOf1 = net.sent.filter(({ from, packet }) => from === 1 && packet.type === 'release').length + (lose === 'release' ? lossy.lost.length : 0);
  return { log, lost: lossy.lost.length, releasesOf1, queue: program.queueState(7), repeats: net.sw.counters().decisions['release-repeat'] ?? 0 };
}

describe('netlock: a lost RELEASE costs time, never the lock', () => {
  it('a lost RELEASE is resent until the switch acknowledges it; the writer is granted after both readers', async () => {
    const outcome = await scenario('release', { retransmitNs: 10_000 });
    expect(outcome.lost).toBe(1);
    expect(outcome.releasesOf1).toBe(2);
    expect(outcome.log).toEqual(['reader 2 releases', 'writer granted']);
    expect(outcome.queue).toMatchObject({ count: 0, granted: 0 });
  });

  it('a lost ACK: the resent RELEASE is acknowledged, not counted again; the writer still waits for reader 2', async () => {
    const outcome = await scenario('ack', { retransmitNs: 10_000 });
    expect(outcome.lost).toBe(1);
    expect(outcome.releasesOf1).toBe(2);
    expect(outcome.repeats).toBe(1);
    expect(outcome.log).toEqual(['reader 2 releases', 'writer granted']);
  });

  it('mutant mutantSendOnce (the old client): the lost RELEASE strands the lock; the writer times out', async () => {
    const outcome = await scenario('release', { retransmitNs: 10_000, mutantSendOnce: 'true' });
    expect(outcome.releasesOf1).toBe(1);
    expect(outcome.log).toEqual(['reader 2 releases', 'writer timed out']);
    expect(outcome.queue).toMatchObject({ granted: 2, released: 1 });
  });

  it('mutant mutantCountDuplicateRelease: the resent RELEASE counts twice and grants the writer beside reader 2', async () => {
    const outcome = await scenario('ack', { retransmitNs: 10_000, mutantCountDuplicateRelease: 'true' });
    expect(outcome.releasesOf1).toBe(2);
    expect(outcome.log).toEqual(['writer granted', 'reader 2 releases']);
  });
});
