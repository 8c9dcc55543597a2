import { LockTimeoutError } from '@lockfabric/ports';
import type { LockClient } from '@lockfabric/ports';
import { netlock, netlockProgram } from '../src/index.js';
import type { NetLockProgram, NetLockProgramOptions } from '../src/index.js';
import { createSwitchNet, severablePorts } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';

const NODES = [1, 2, 3];
const MS = 1_000_000;

describe('netlock: a compute node fails (FailureNotice)', () => {
  function scenario(hot: boolean, fire: boolean) {
    // Lock 5 is cold (served by the lock server, node 1) unless installed as hot (queued in the switch).
    const program = netlockProgram(hot ? { allocation: [{ lock: 5, base: 0, size: 8 }] } : {});
    const net = createSwitchNet({ seed: 11, computeNodes: NODES, program });
    net.startServices(netlock);
    const dead = netlock.createClient(net.clientPorts({ node: 3, client: 0 }));
    const survivor = netlock.createClient(net.clientPorts({ node: 2, client: 0 }));
    const run = (async () => {
      await dead.acquire(5, 'exclusive');
      const waiting = survivor.acquire(5, 'exclusive', { timeoutMs: 2 }).catch((e: unknown) => e);
      await net.clock.sleep(0.5 * MS);
      if (fire) net.failures.fire(3);
      return waiting;
    })();
    return { net, run };
  }

  it('cold lock: the lock server drops the dead holder and grants the survivor', async () => {
    const { net, run } = scenario(false, true);
    await net.scheduler.run();
    expect(await run).toMatchObject({ lock: 5, viaSwitch: false });
    await net.stopServices();
  });

  it('cold lock without the notice: the survivor times out', async () => {
    const { net, run } = scenario(false, false);
    await net.scheduler.run();
    expect(await run).toBeInstanceOf(LockTimeoutError);
    await net.stopServices();
  });

  it('hot lock (switch queue) without a purge: the dead holder’s entry stays, the survivor times out', async () => {
    const { net, run } = scenario(true, true);
    await net.scheduler.run();
    expect(await run).toBeInstanceOf(LockTimeoutError);
    await net.stopServices();
  });
});

/**
 * The switch-queue purge in virtual time: the failure notice reaches a stand-in for the
 * coordinator, which purges the dead machine in the switch (control plane) and injects the
 * resulting GRANTs into the pipeline, which routes them to the grantees (they carry `dst`).
 */
describe('netlock: a crashed compute node’s switch-queue entries are purged', () => {
  const DEAD = 3;
  interface Outcome {
    /** [time, what] in order: grants, releases and errors of every client. */
    readonly log: [number, string][];
    readonly purges: ReturnType<NetLockProgram['purgeMachine']>[];
  }

  async function crash(options: NetLockProgramOptions = {}): Promise<Outcome> {
    const program = netlockProgram({ allocation: [{ lock: 5, base: 0, size: 8 }], ...options });
    const net = createSwitchNet({ seed: 13, computeNodes: NODES, program });
    net.startServices(netlock);
    const purges: Outcome['purges'] = [];
    const controlPort = net.clientPorts({ node: 1, client: 1_000 }).switchPort;
    net.failures.onComputeNodeFailed((node) => {
      const result = program.purgeMachine(node);
      purges.push(result);
      for (const grant of result.grants) controlPort?.send(grant);
    });
    let dead = false;
    const client = (node: number, c: number) => netlock.createClient(node === DEAD ? severablePorts(net.clientPorts({ node, client: c }), () => dead) : net.clientPorts({ node, client: c }));
    const holder = client(DEAD, 0);
    const writer = client(2, 0);
    const deadReader = client(DEAD, 1);
    const reader = client(1, 0);
    const log: [number, string][] = [];
    const note = (what: string) => log.push([net.clock.nowNs() / MS, what]);
    const attempt = async (name: string, c: LockClient, mode: 'shared' | 'exclusive', holdMs: number) => {
      try {
        const grant = await c.acquire(5, mode, { timeoutMs: 3 });
        note(`${name} granted`);
        await net.clock.sleep(holdMs * MS);
        note(`${name} releases`);
        await c.release(grant);
      } catch (error) {
        note(`${name} ${error instanceof Error ? error.name : String(error)}`);
      }
    };
    const run = (async () => {
      const held = await holder.acquire(5, 'exclusive');
      note('dead holder granted');
      await net.clock.sleep(0.1 * MS);
      const waits = [attempt('writer', writer, 'exclusive', 0.5)];
      await net.clock.sleep(0.1 * MS);
      void deadReader.acquire(5, 'shared', { timeoutMs: 3 }).catch(() => undefined);
      await net.clock.sleep(0.1 * MS);
      waits.push(attempt('reader', reader, 'shared', 0.1));
      await net.clock.sleep(0.2 * MS);
      dead = true; // SIGKILL: nothing node 3 sends leaves it any more
      await net.clock.sleep(1 * MS); // detection time
      net.failures.fire(DEAD);
      await net.clock.sleep(0.1 * MS);
      // The same process was only paused (not killed): it resumes and releases what recovery took back.
      dead = false;
      await holder.release(held).catch(() => undefined);
      dead = true;
      await Promise.all(waits);
    })();
    await net.scheduler.run();
    await run;
    await net.stopServices();
    return { log, purges };
  }

  const events = (o: Outcome) => o.log.map(([, what]) => what);

  it('the dead holder and the dead reader leave the queue; the writer, then the reader, are granted', async () => {
    const outcome = await crash();
    expect(outcome.purges).toMatchObject([{ removed: 2, removedHolders: 1, locks: [5], wasFenced: false }]);
    expect(outcome.purges[0]?.grants.map((g) => g.dst)).toEqual([2]);
    // The resumed holder's late release was fenced: the writer keeps the lock until it releases.
    expect(events(outcome)).toEqual(['dead holder granted', 'writer granted', 'writer releases', 'reader granted', 'reader releases']);
  });

  it('mutant: a purge that grants nobody leaves the writer (and the reader behind it) stuck until their timeouts', async () => {
    const outcome = await crash({ mutantPurgeWithoutGrant: true });
    expect(events(outcome)).toContain('writer LockTimeoutError');
    expect(events(outcome)).not.toContain('writer granted');
  });

  it('without the fence the resumed holder’s release is still dropped here: it names a slot the purge took out of the queue', async () => {
    // The fence matters when the dead machine's slot is still in the queue (a reader in a run
    // survivors hold): reader-release-order.test.ts shows that mutant caught.
    const outcome = await crash({ mutantPurgeWithoutFence: true });
    expect(events(outcome)).toEqual(['dead holder granted', 'writer granted', 'writer releases', 'reader granted', 'reader releases']);
  });
});
