import { describe, expect, it } from 'vitest';
import { ConfigError, LockAbortedError, LockTimeoutError } from '@lockfabric/ports';
import type { Span, SpanAttributeValue, StartSpanOptions, Trace } from '@lockfabric/ports';
import { runInMemory } from '@lockfabric/harness';
import { createSimCluster } from '@lockfabric/sim';
import { createDslrClient, dslr, readDslrOptions } from '../src/index.js';
import type { DslrClient } from '../src/index.js';
import { Scenario } from './support/scenario.js';

const US = 1_000;

class RecordingTrace implements Trace {
  readonly spans: { name: string; attributes: Record<string, SpanAttributeValue>; ended: boolean }[] = [];
  startSpan(name: string, options?: StartSpanOptions): Span {
    const record = { name, attributes: { ...(options?.attributes ?? {}) }, ended: false };
    this.spans.push(record);
    return {
      context: undefined,
      setAttribute: (key, value) => void (record.attributes[key] = value),
      addLink: () => undefined,
      recordError: () => undefined,
      end: () => void (record.ended = true),
    };
  }
}

describe('dslr: options', () => {
  it('rejects unknown and out-of-range options with one ConfigError naming each', () => {
    expect(() => readDslrOptions({ lease: 1 })).toThrow(ConfigError);
    expect(() => readDslrOptions({ counterLimit: 40_000 })).toThrow(/counterLimit/);
    expect(() => readDslrOptions({ updateLocks: true, counterLimit: 600 })).toThrow(/counterLimit/);
    expect(() => readDslrOptions({ slots: 4 })).toThrow(/maxSlots/);
    expect(() => readDslrOptions({ polling: 'sometimes' })).toThrow(/polling/);
  });

  it('defaults to the paper’s values; paperLiteral turns every switch on, a single switch can be turned off again', () => {
    const defaults = readDslrOptions();
    expect(defaults).toMatchObject({ leaseNs: 10_000_000, counterLimit: 32_768, maxSlots: 1, backoffBaseNs: 10_000, backoffCapNs: 10_000_000, polling: 'dynamic' });
    const literal = readDslrOptions({ paperLiteral: true, paperLiteralAbandonTicket: false });
    const switches = Object.entries(literal).filter(([key]) => key.startsWith('paperLiteral'));
    expect(switches.filter(([, on]) => on).length).toBe(switches.length - 1);
    expect(literal.paperLiteralAbandonTicket).toBe(false);
  });

  it('rejects an acquire with more slots than maxSlots', async () => {
    const s = new Scenario({ maxSlots: 2 });
    await expect(s.client().acquire(0, 'exclusive', { slots: 3 })).rejects.toBeInstanceOf(ConfigError);
  });
});

describe('dslr: timeouts, aborts and leases', () => {
  it('a timed-out or aborted waiter fails with the typed error and its ticket is released once granted', async () => {
    const s = new Scenario();
    const holder = s.client();
    const errors: unknown[] = [];
    s.at(0, async () => {
      const grant = await holder.acquire(0, 'exclusive');
      await s.cluster.clock.sleep(100 * US);
      await holder.release(grant);
    });
    s.at(1 * US, () => s.client().acquire(0, 'exclusive', { timeoutMs: 0.02 }).catch((error) => errors.push(error)));
    const controller = new AbortController();
    s.at(2 * US, () => s.client().acquire(0, 'shared', { signal: controller.signal }).catch((error) => errors.push(error)));
    s.at(30 * US, async () => controller.abort(new Error('caller gave up')));
    await s.run();
    expect(errors[0]).toBeInstanceOf(LockTimeoutError);
    expect(errors[1]).toBeInstanceOf(LockAbortedError);
    expect((errors[1] as Error).message).toMatch(/caller gave up/);
    // both tickets were granted in the background and released: the word is drained
    expect(s.counters()).toEqual({ nX: 2, nS: 1, nU: 0, maxX: 2, maxS: 1, maxU: 0 });
  });

  it('reports the lease: remaining time, checkLease, and release past the lease', async () => {
    const s = new Scenario({ leaseNs: 50_000 });
    const client = s.client();
    const seen: string[] = [];
    s.at(0, async () => {
      const grant = await client.acquire(0, 'shared');
      seen.push(`remaining ${client.leaseRemainingNs(grant) > 40 * US}`);
      client.checkLease(grant);
      await s.cluster.clock.sleep(60 * US);
      expect(() => client.checkLease(grant)).toThrow(/expired/);
      await client.release(grant).catch((error: Error) => seen.push(error.name));
    });
    await s.run();
    expect(seen).toEqual(['remaining true', 'LeaseExpiredError']);
    // an expired holder writes nothing: its slot stays unreleased for a waiter to skip
    expect(s.counters()).toMatchObject({ nS: 0, maxS: 1 });
  });

  it('a second release of the same grant does nothing', async () => {
    const s = new Scenario();
    const client = s.client();
    s.at(0, async () => {
      const grant = await client.acquire(0, 'exclusive');
      await client.release(grant);
      await client.release(grant);
    });
    await s.run();
    expect(s.counters()).toMatchObject({ nX: 1, maxX: 1 });
  });
});

describe('dslr: spans', () => {
  it('lock.acquire carries protocol, outcome, verbs and retries; a skip records a lock.reset span', async () => {
    const trace = new RecordingTrace();
    const { cluster, scheduler } = createSimCluster({ seed: 1, lockCount: 4, entryBytes: 8, trace, jitterNs: 0 });
    const make = (client: number): DslrClient => createDslrClient(cluster.clientPorts({ node: cluster.computeNodeIds[0]!, client }), readDslrOptions({ leaseNs: 50_000 }));
    const [a, b] = [make(0), make(1)];
    const done = (async () => {
      await a.acquire(1, 'exclusive');
      await b.acquire(1, 'exclusive').catch(() => undefined);
    })();
    await scheduler.run();
    await done;
    const acquires = trace.spans.filter((span) => span.name === 'lock.acquire');
    expect(acquires[0]!.attributes).toMatchObject({ 'lockfabric.protocol': 'dslr', 'lockfabric.outcome': 'granted', 'lockfabric.verbs': 1, 'lockfabric.retries': 0 });
    expect(acquires[1]!.attributes['lockfabric.outcome']).toBe('LOCK_ABORTED');
    expect(acquires[1]!.attributes['lockfabric.verbs']).toBeGreaterThan(2);
    expect(acquires.every((span) => span.ended)).toBe(true);
    expect(trace.spans.filter((span) => span.name === 'lock.reset').map((span) => span.attributes['lockfabric.dslr.reset_cause'])).toEqual(['skip']);
  });
});

describe('dslr: shared compatibility (I2)', () => {
  it('readers never wait for readers: each of five overlapping shared acquires is one FAA', async () => {
    const trace = new RecordingTrace();
    const { cluster, scheduler } = createSimCluster({ seed: 2, lockCount: 4, entryBytes: 8, trace });
    const readers = Array.from({ length: 5 }, (_, i) => createDslrClient(cluster.clientPorts({ node: cluster.computeNodeIds[i % 2]!, client: i }), readDslrOptions()));
    const runs = readers.map(async (reader, i) => {
      await cluster.clock.sleep(i * 500);
      const grant = await reader.acquire(2, 'shared');
      await cluster.clock.sleep(20 * US);
      await reader.release(grant);
    });
    await scheduler.run();
    await Promise.all(runs);
    const spans = trace.spans.filter((span) => span.name === 'lock.acquire');
    expect(spans.map((span) => span.attributes['lockfabric.verbs'])).toEqual([1, 1, 1, 1, 1]);
  });
});

describe('dslr: polling (I13, A.7)', () => {
  it('dynamic interval polling issues fewer READs than busy polling on the same contended workload', async () => {
    const spec = { clients: 10, locks: 1, readRatio: 0.3, distribution: 'uniform' as const, operations: 200, thinkNs: 1_000, criticalSectionNs: 5_000, seed: 9 };
    // The paper's FAA release, so that every verb but the READ polls is pinned: one FAA per acquire and per release.
    const dynamic = await runInMemory({ substrate: 'sim', protocol: dslr, protocolOptions: { paperLiteralFaaRelease: true }, spec });
    const busy = await runInMemory({ substrate: 'sim', protocol: dslr, protocolOptions: { polling: 'busy', paperLiteralFaaRelease: true }, spec });
    expect(dynamic.verdict.ok && busy.verdict.ok).toBe(true);
    expect(dynamic.verbs['faa']).toBe(400);
    expect(busy.verbs['faa']).toBe(400);
    expect(dynamic.verbs['read']!).toBeLessThan(busy.verbs['read']! / 2);
    expect(dynamic.verbs['cas'] ?? 0).toBe(0);
  });
});
