import { LockTimeoutError } from '@lockfabric/ports';
import { netlockProgram } from '@lockfabric/switch';
import { createSwitchNet } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { netlock } from '../src/index.js';

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

  it('hot lock (switch queue): not recovered — the dead holder’s queue entry stays (README: what is left)', async () => {
    const { net, run } = scenario(true, true);
    await net.scheduler.run();
    expect(await run).toBeInstanceOf(LockTimeoutError);
    await net.stopServices();
  });
});
