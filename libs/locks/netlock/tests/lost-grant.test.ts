import { LockTimeoutError } from '@lockfabric/ports';
import type { ClientPorts, LockClient, LockMode, LockPacket } from '@lockfabric/ports';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { createSwitchNet } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { netlock, netlockProgram } from '../src/index.js';
import { duplicating, losing } from './losing-link.js';

// A GRANT (or CONTINUE grant, or PUSH-BACK) lost on the way used to strand its lock: the entry was
// granted to a client that never knew it. Now the client resends its ACQUIRE, and the cancel of a
// request that timed out, and the switch recognises a request it queued (its per-request register)
// and sends the GRANT again (README, "Lost GRANTs and NOTIFYs"). `mutantGrantOnce` is the old
// client and switch: each case strands the lock there.

const LOCK = 7;
const OLD: ProtocolOptions = { retransmitNs: 10_000, mutantGrantOnce: 'true' };
const NEW: ProtocolOptions = { retransmitNs: 10_000 };
const grantTo = (p: LockPacket) => p.lock === LOCK && p.type === 'grant';

type Client = LockClient<Awaited<ReturnType<ReturnType<typeof netlock.createClient>['acquire']>>>;

function setup(options: ProtocolOptions, size = 8) {
  // The switch half of the mutant is applied where the program is built (harness, switch app).
  const program = netlockProgram({ allocation: [{ lock: LOCK, base: 0, size }], ...(options['mutantGrantOnce'] === 'true' ? { mutantForgetQueued: true } : {}) });
  const net = createSwitchNet({ seed: 11, computeNodes: [1, 2, 3, 4], program });
  net.startServices(netlock, options);
  const client = (node: number, wrap: (ports: ClientPorts) => ClientPorts = (p) => p) => netlock.createClient(wrap(net.clientPorts({ node, client: 0 })), options) as Client;
  const log: string[] = [];
  /** Acquires and logs "<name> granted" or "<name> timed out"; resolves to the grant or undefined. */
  const take = (name: string, c: Client, mode: LockMode, timeoutMs: number) =>
    c.acquire(LOCK, mode, { timeoutMs }).then(
      (g) => (log.push(`${name} granted`), g),
      (error: unknown) => (log.push(error instanceof LockTimeoutError ? `${name} timed out` : String(error)), undefined),
    );
  const finish = async (run: Promise<void>) => {
    await net.scheduler.run();
    await run;
    await net.stopServices();
    return { log, queue: program.queueState(LOCK), decisions: net.sw.counters().decisions };
  };
  return { net, client, take, finish, log };
}

/** A's first GRANT is lost; then B wants the lock. */
async function lostFirstGrant(options: ProtocolOptions) {
  const { client, take, finish } = setup(options);
  const a = client(1, (p) => losing(p, grantTo));
  const b = client(2);
  return finish(
    (async () => {
      const g = await take('a', a, 'exclusive', 1);
      if (g) await a.release(g);
      const h = await take('b', b, 'exclusive', 1);
      if (h) await b.release(h);
    })(),
  );
}

/** W holds; R1 and R2 queue as readers; R1 loses what `lost` picks of its packets; R1 holds 200 µs. */
async function readersBehindWriter(options: ProtocolOptions, lost: (p: LockPacket) => boolean) {
  const { net, client, take, finish, log } = setup(options);
  const w = client(1);
  const r1 = client(2, (p) => losing(p, lost));
  const r2 = client(3);
  return finish(
    (async () => {
      const gw = await take('w', w, 'exclusive', 1);
      const first = take('r1', r1, 'shared', 1);
      await net.clock.sleep(5_000);
      const second = take('r2', r2, 'shared', 1);
      await net.clock.sleep(5_000);
      await w.release(gw!);
      const g1 = await first;
      if (g1) {
        await net.clock.sleep(200_000);
        log.push('r1 releases');
        await r1.release(g1);
      }
      const g2 = await second;
      if (g2) await r2.release(g2);
    })(),
  );
}

/** R1's first GRANT, the CONTINUE handover, is lost. */
const lostContinueGrant = (options: ProtocolOptions) => readersBehindWriter(options, grantTo);

/** R1's CONTINUE NOTIFY is lost. */
const lostNotify = (options: ProtocolOptions) => readersBehindWriter(options, (q) => q.lock === LOCK && q.type === 'notify');

/** H holds 2 ms; W gives up after 0.5 ms, and the GRANT H's release hands it is lost; then N wants the lock. */
async function lostLateGrant(options: ProtocolOptions) {
  const { net, client, take, finish } = setup(options);
  const h = client(1);
  const w = client(2, (p) => losing(p, grantTo));
  const n = client(3);
  return finish(
    (async () => {
      const gh = await take('h', h, 'exclusive', 1);
      await take('w', w, 'exclusive', 0.5);
      await net.clock.sleep(1_500_000);
      await h.release(gh!);
      await net.clock.sleep(2_000_000);
      const gn = await take('n', n, 'exclusive', 1);
      if (gn) await n.release(gn);
    })(),
  );
}

/** Every ACQUIRE and GRANT of W arrives twice; then N wants the lock. */
async function duplicated(options: ProtocolOptions) {
  const { net, client, take, finish } = setup(options);
  const h = client(1);
  const w = client(2, (p) => duplicating(p, (q) => q.lock === LOCK && (q.type === 'acquire' || q.type === 'grant')));
  const n = client(3);
  return finish(
    (async () => {
      const gh = await take('h', h, 'exclusive', 1);
      const waiting = take('w', w, 'exclusive', 1);
      await net.clock.sleep(20_000);
      await h.release(gh!);
      const gw = await waiting;
      if (gw) await w.release(gw);
      const gn = await take('n', n, 'exclusive', 1);
      if (gn) await n.release(gn);
    })(),
  );
}

/** A queue of one slot: H holds, W's first PUSH-BACK is lost; H releases after 100 µs. */
async function lostPushBack(options: ProtocolOptions) {
  const { net, client, take, finish } = setup({ ...options, pushBackNs: 5000 }, 1);
  const h = client(1);
  const w = client(2, (p) => losing(p, (q) => q.lock === LOCK && q.type === 'push-back'));
  return finish(
    (async () => {
      const gh = await take('h', h, 'exclusive', 1);
      const waiting = take('w', w, 'exclusive', 1);
      await net.clock.sleep(100_000);
      await h.release(gh!);
      const gw = await waiting;
      if (gw) await w.release(gw);
    })(),
  );
}

describe('netlock: a lost GRANT costs time, never the lock', () => {
  it('a lost GRANT: the resent ACQUIRE fetches it again; the next client is granted after the release', async () => {
    const outcome = await lostFirstGrant(NEW);
    expect(outcome.log).toEqual(['a granted', 'b granted']);
    expect(outcome.decisions['grant-repeat']).toBe(1);
    expect(outcome.queue).toMatchObject({ count: 0, granted: 0 });
  });

  it('a lost CONTINUE grant: sent again with CONTINUE, so the reader behind is granted beside it', async () => {
    const outcome = await lostContinueGrant(NEW);
    expect(outcome.log).toEqual(['w granted', 'r1 granted', 'r2 granted', 'r1 releases']);
    expect(outcome.decisions['grant-repeat']).toBe(1);
    expect(outcome.decisions['grant-notify']).toBe(1);
    expect(outcome.queue).toMatchObject({ count: 0 });
  });

  it('a lost NOTIFY costs time only: the reader behind is granted when the run ends (old code alike)', async () => {
    for (const options of [NEW, OLD]) {
      const outcome = await lostNotify(options);
      expect(outcome.log).toEqual(['w granted', 'r1 granted', 'r1 releases', 'r2 granted']);
      expect(outcome.queue).toMatchObject({ count: 0 });
    }
  });

  it('the lost GRANT of a request that timed out: the resent cancel fetches it, the client releases it, the lock moves on', async () => {
    const outcome = await lostLateGrant(NEW);
    expect(outcome.log).toEqual(['h granted', 'w timed out', 'n granted']);
    expect(outcome.decisions['cancel-deferred']).toBeGreaterThan(0);
    expect(outcome.decisions['cancel-granted']).toBe(1);
    expect(outcome.queue).toMatchObject({ count: 0 });
  });

  it('a duplicated ACQUIRE is queued once and a duplicated GRANT is dropped: the lock moves on', async () => {
    const outcome = await duplicated(NEW);
    expect(outcome.log).toEqual(['h granted', 'w granted', 'n granted']);
    expect(outcome.decisions['acquire-repeat']).toBeGreaterThan(0);
    expect(outcome.queue).toMatchObject({ count: 0 });
  });

  it('a lost PUSH-BACK: the resent ACQUIRE is pushed back again, and the next try is queued', async () => {
    const outcome = await lostPushBack(NEW);
    expect(outcome.log).toEqual(['h granted', 'w granted']);
    expect(outcome.decisions['repeat-push-back']).toBeGreaterThan(0);
  });

  it('mutant mutantGrantOnce (the old client and switch): each lost GRANT strands the lock', async () => {
    expect((await lostFirstGrant(OLD)).log).toEqual(['a timed out', 'b timed out']);
    expect((await lostContinueGrant(OLD)).log).toEqual(['w granted', 'r1 timed out', 'r2 timed out']);
    expect((await lostLateGrant(OLD)).log).toEqual(['h granted', 'w timed out', 'n timed out']);
    expect((await duplicated(OLD)).log).toEqual(['h granted', 'w granted', 'n timed out']);
    expect((await lostPushBack(OLD)).log).toEqual(['h granted', 'w timed out']);
  });
});
