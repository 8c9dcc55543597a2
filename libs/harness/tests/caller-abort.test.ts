import { sherman } from '@lockfabric/lock-sherman';
import { srvlock } from '@lockfabric/lock-srvlock';
import type { ProtocolDefinition } from '@lockfabric/locks-common';
import { LockAbortedError, noopTrace } from '@lockfabric/ports';
import type { AcquireOptions, ClientPorts, Clock } from '@lockfabric/ports';
import { createSimCluster } from '@lockfabric/sim';
import { forwardProgram } from '@lockfabric/switch';
import { describe, expect, it } from 'vitest';
import { createSwitchNet } from '../src/index.js';

const WAIT_NS = 30_000;

/**
 * One client holds lock 0, a second waits for it with the caller's real AbortSignal, which is
 * aborted WAIT_NS later: the wait (now on a Stopper, not an AbortController) must end right then.
 */
async function abortedWhileWaiting(protocol: ProtocolDefinition, clock: Clock, holderPorts: ClientPorts, waiterPorts: ClientPorts, options: AcquireOptions, drive: () => Promise<unknown>) {
  const holder = protocol.createClient(holderPorts);
  const waiter = protocol.createClient(waiterPorts);
  const controller = new AbortController();
  const scenario = (async () => {
    const grant = await holder.acquire(0, 'exclusive');
    const waiting = waiter.acquire(0, 'exclusive', { ...options, signal: controller.signal }).then(
      () => undefined,
      (error: unknown) => ({ error, atNs: clock.nowNs() }),
    );
    await clock.sleep(WAIT_NS);
    const abortedAtNs = clock.nowNs();
    controller.abort('caller went away');
    const outcome = await waiting;
    await holder.release(grant);
    return { outcome, abortedAtNs };
  })();
  await drive();
  return scenario;
}

describe("a caller's AbortSignal ends a wait that runs on a Stopper", () => {
  for (const options of [{}, { timeoutMs: 10 }]) {
    const deadline = 'timeoutMs' in options ? 'a deadline' : 'no deadline';
    it(`sherman, local wait behind a client of the same node (${deadline})`, async () => {
      const { cluster, scheduler } = createSimCluster({ seed: 1, lockCount: 4, entryBytes: sherman.entryBytes, jitterNs: 0, trace: noopTrace });
      const node = cluster.computeNodeIds[0]!;
      const { outcome, abortedAtNs } = await abortedWhileWaiting(
        sherman,
        cluster.clock,
        cluster.clientPorts({ node, client: 0 }),
        cluster.clientPorts({ node, client: 1 }),
        options,
        () => scheduler.run(),
      );
      expect(outcome?.error).toBeInstanceOf(LockAbortedError);
      expect((outcome?.error as LockAbortedError).reason).toBe('caller went away');
      expect(outcome?.atNs).toBe(abortedAtNs);
    });

    it(`srvlock, waiting for the manager's grant (${deadline})`, async () => {
      const net = createSwitchNet({ seed: 1, computeNodes: [1, 2, 3], program: forwardProgram() });
      net.startServices(srvlock);
      const { outcome, abortedAtNs } = await abortedWhileWaiting(srvlock, net.clock, net.clientPorts({ node: 2, client: 0 }), net.clientPorts({ node: 3, client: 0 }), options, () => net.scheduler.run());
      expect(outcome?.error).toBeInstanceOf(LockAbortedError);
      expect((outcome?.error as LockAbortedError).reason).toBe('caller went away');
      // The acquire returns once the manager acknowledged the cancel: one round trip (4 µs here).
      expect(outcome?.atNs).toBeGreaterThan(abortedAtNs);
      expect(outcome?.atNs).toBeLessThanOrEqual(abortedAtNs + 5_000);
      await net.stopServices();
    });
  }
});
