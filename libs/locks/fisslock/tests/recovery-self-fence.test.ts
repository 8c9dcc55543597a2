import { describe, expect, it } from 'vitest';
import type { NodeId } from '@lockfabric/ports';
import { readFissLockOptions } from '../src/options.js';
import { RecoverableFissLockClient, fenceMachine, isMachineFenced } from '../src/recovery/index.js';
import { fissSim } from './support/fiss-sim.js';

const codeOf = (e: unknown): string => (e as { code?: string }).code ?? String(e);

describe('fisslock: a machine declared failed while it still runs fences itself (spec §7.1)', () => {
  it('its waiting acquire aborts, later acquires abort at once, a hold from before is released as expired', async () => {
    const sim = fissSim({ seed: 9, locks: 4, computeNodes: 2 });
    const options = readFissLockOptions({ policy: 'read-preferring' });
    const [a, b] = sim.nodes as [NodeId, NodeId];
    const holder = new RecoverableFissLockClient(sim.cluster.clientPorts({ node: b, client: 0 }), options);
    const waiter = new RecoverableFissLockClient(sim.cluster.clientPorts({ node: b, client: 1 }), options);
    const other = new RecoverableFissLockClient(sim.cluster.clientPorts({ node: a, client: 0 }), options);
    const held = holder.acquire(0, 'exclusive');
    await sim.step();
    const grant = await held;
    const waiting = waiter.acquire(0, 'exclusive', { timeoutMs: 50 }).then(
      () => 'granted',
      (e: unknown) => codeOf(e),
    );
    await sim.step();

    expect(isMachineFenced(sim.pool(b))).toBe(false);
    expect(fenceMachine(sim.pool(b), 'declared failed')).toBe(2);
    expect(fenceMachine(sim.pool(b), 'declared failed')).toBe(0); // once
    expect(isMachineFenced(sim.pool(b))).toBe(true);
    await sim.step();
    expect(await waiting).toBe('LOCK_ABORTED');
    expect(await holder.acquire(1, 'shared').then(() => 'granted', codeOf)).toBe('LOCK_ABORTED');
    expect(await holder.release(grant).then(() => 'released', codeOf)).toBe('LEASE_EXPIRED');
    // a client of another machine is untouched
    expect(isMachineFenced(sim.pool(a))).toBe(false);
    const free = other.acquire(1, 'exclusive');
    await sim.step();
    await expect(free).resolves.toMatchObject({ lock: 1 });
    await sim.stop();
  });
});
