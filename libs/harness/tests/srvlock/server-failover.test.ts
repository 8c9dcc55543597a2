import { LockTimeoutError } from '@lockfabric/ports';
import type { NodeServiceContext, ProtocolOptions } from '@lockfabric/locks-common';
import type { HistoryEvent } from '@lockfabric/check';
import { forwardProgram } from '@lockfabric/switch';
import { createSwitchNet, failoverGraceScenario, runInMemory } from '../../src/index.js';
import { describe, expect, it } from 'vitest';
import { SRVLOCK_HOMES, currentHome, nextLiveNode, srvlock } from '@lockfabric/lock-srvlock';
import type { LockServer } from '@lockfabric/lock-srvlock';

const NODES = [1, 2, 3];
const MS = 1_000_000;

/** srvlock whose servers are kept, to read their counters. */
function watched() {
  const servers = new Map<number, LockServer>();
  const protocol = {
    ...srvlock,
    services: {
      compute: (ctx: NodeServiceContext, o?: ProtocolOptions) => {
        const s = srvlock.services!.compute!(ctx, o) as LockServer;
        servers.set(ctx.ports.self.node, s);
        return s;
      },
    },
  };
  return { protocol, servers };
}

describe('srvlock: the server node fails (failover to the next live compute node)', () => {
  it('homes: every lock on the lowest node; a dead server’s role goes to the next live node in the cluster’s order', () => {
    expect(currentHome(SRVLOCK_HOMES, 7, NODES, new Set())).toBe(1);
    expect(currentHome(SRVLOCK_HOMES, 7, NODES, new Set([1]))).toBe(2);
    expect(currentHome(SRVLOCK_HOMES, 7, NODES, new Set([1, 2]))).toBe(3);
    expect(currentHome(SRVLOCK_HOMES, 7, NODES, new Set([3]))).toBe(1);
    expect(nextLiveNode(3, NODES, new Set([3, 1]))).toBe(2);
  });

  // A client on node 3 holds lock 5 when server 1 dies; a client on node 2 (the new server) asks
  // after the notice; lock 6, never held, is served afterwards.
  const graceScenario = async (protocolOptions: ProtocolOptions) => {
    const outcome = await failoverGraceScenario<LockServer>({ protocol: srvlock, protocolOptions, seed: 9, computeNodes: NODES, deadNode: 1, holderNode: 3, waiterNode: 2, lock: 5, freshLock: 6 });
    return { ...outcome, newServer: outcome.newHome };
  };

  it('grace: the new server reclaims the survivors’ holds before granting', async () => {
    const { grantedAtNs, releasedAtNs, newServer } = await graceScenario({});
    expect(grantedAtNs).toBeGreaterThan(releasedAtNs);
    expect(newServer.counters.graces).toBe(1);
    expect(newServer.counters.reclaimed).toBe(1);
    expect(newServer.inGrace).toBe(false);
  });

  it('mutant: a new server that serves before grace ends grants the held lock again', async () => {
    const { grantedAtNs, releasedAtNs, newServer } = await graceScenario({ mutantServeDuringGrace: true });
    expect(grantedAtNs).toBeGreaterThan(0);
    expect(grantedAtNs).toBeLessThan(releasedAtNs);
    expect(newServer.counters.reclaimed).toBe(0);
  });

  it('a survivor that does not answer keeps grace open until it is declared dead; waiters end typed meanwhile', async () => {
    const net = createSwitchNet({ seed: 11, computeNodes: NODES, program: forwardProgram() });
    const { protocol, servers } = watched();
    net.startServices(protocol);
    const client = srvlock.createClient(net.clientPorts({ node: 2, client: 0 }));
    const run = (async () => {
      await client.release(await client.acquire(5, 'exclusive'));
      await net.stopServicesOf(3); // silent, not yet declared dead
      await net.stopServicesOf(1);
      net.failures.fire(1);
      const during = await client.acquire(5, 'exclusive', { timeoutMs: 20 }).catch((e: unknown) => e);
      const inGraceThen = servers.get(2)!.inGrace;
      net.failures.fire(3);
      const after = await client.acquire(5, 'exclusive', { timeoutMs: 20 });
      await client.release(after);
      return { during, inGraceThen, after };
    })();
    await net.scheduler.run();
    const { during, inGraceThen, after } = await run;
    expect(during).toBeInstanceOf(LockTimeoutError);
    expect(inGraceThen).toBe(true);
    expect(after).toMatchObject({ lock: 5, route: { kind: 'packet', dst: 2 } });
    expect(servers.get(2)!.inGrace).toBe(false);
    await net.stopServices();
  });

  function longestAcquireNs(events: Iterable<HistoryEvent>): number {
    const open = new Map<string, number>();
    let longest = 0;
    for (const e of events) {
      if (e.op !== 'acquire') continue;
      if (e.phase === 'invoke') open.set(e.client, e.timeNs);
      else longest = Math.max(longest, e.timeNs - (open.get(e.client) ?? e.timeNs));
    }
    return longest;
  }

  // Critical sections off the 5 ms retransmit grid, failure mid-hold: survivors hold locks across the server's death.
  const spec = { clients: 9, locks: 3, readRatio: 0.1, distribution: 'uniform' as const, durationMs: 80, thinkNs: 20_000, criticalSectionNs: 7.3 * MS, seed: 3, timeoutMs: 40 };
  const nodeFailure = { computeNode: 0, atMs: 15, detectionMs: 2 };
  const protocolOptions = { maxAttempts: 4 };

  it('sim run: survivors are served by the new server, holds across the failure are reclaimed, the history passes; the grace mutant is caught', async () => {
    let reclaimed = 0;
    let caught = 0;
    for (const seed of [3, 4, 5, 6]) {
      const { protocol, servers } = watched();
      const result = await runInMemory({ substrate: 'sim', protocol, protocolOptions, spec: { ...spec, seed }, computeNodes: 3, nodeFailure });
      expect(result.verdict.ok, `seed ${seed} ${JSON.stringify(result.verdict).slice(0, 800)}`).toBe(true);
      expect(result.cutOff).toBe(false);
      const failure = result.nodeFailure!;
      const after = [...result.history.events()].filter((e) => e.op === 'acquire' && e.phase === 'ok' && e.timeNs > failure.reportedAtNs);
      expect(new Set(after.map((e) => e.lock)), `seed ${seed}`).toStrictEqual(new Set([0, 1, 2]));
      expect(longestAcquireNs(result.history.events()), `seed ${seed}`).toBeLessThanOrEqual((spec.timeoutMs + 5) * MS + 0.1 * MS);
      expect(servers.get(2)?.counters.graces, `seed ${seed}`).toBe(1);
      reclaimed += servers.get(2)?.counters.reclaimed ?? 0;
      const mutant = await runInMemory({ substrate: 'sim', protocol: srvlock, protocolOptions: { ...protocolOptions, mutantServeDuringGrace: true }, spec: { ...spec, seed }, computeNodes: 3, nodeFailure });
      if (!mutant.verdict.ok && mutant.verdict.violations.length > 0) caught++;
    }
    expect(reclaimed).toBeGreaterThan(0);
    expect(caught).toBeGreaterThan(0);
  });
});
