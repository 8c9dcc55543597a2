import { VirtualScheduler } from '@lockfabric/sim';
import { describe, expect, it } from 'vitest';
import type { BusMessage } from '../src/bus.js';
import { subjectMatches } from '../src/bus.js';
import { ControlBusClosedError, ControlNoRespondersError, ControlRequestTimeoutError, ControlSubjectError } from '../src/errors.js';
import { InMemoryControlBus } from '../src/in-memory-bus.js';

const bytes = (...values: number[]) => Uint8Array.from(values);

describe('subject patterns (NATS semantics)', () => {
  it('`*` matches one token, a trailing `>` one or more, anything else exactly', () => {
    expect(subjectMatches('lf.c.hb.*.*', 'lf.c.hb.compute.1')).toBe(true);
    expect(subjectMatches('lf.c.hb.*.*', 'lf.c.hb.compute')).toBe(false);
    expect(subjectMatches('lf.c.hb.*.*', 'lf.c.hb.compute.1.x')).toBe(false);
    expect(subjectMatches('lf.c.ctl.>', 'lf.c.ctl.recovery.failure')).toBe(true);
    expect(subjectMatches('lf.c.ctl.>', 'lf.c.ctl')).toBe(false);
    expect(subjectMatches('lf.c.ctl.membership', 'lf.c.ctl.membership')).toBe(true);
    expect(subjectMatches('lf.c.ctl.membership', 'lf.c.ctl.membershi')).toBe(false);
  });
});

describe('in-memory control bus on a virtual scheduler', () => {
  it('a held (paused) party handles what reached it when it wakes, in arrival order, and answers requests only then', async () => {
    const scheduler = new VirtualScheduler();
    const bus = new InMemoryControlBus(scheduler, { latencyNs: 1_000 });
    const a = bus.connect('a');
    const b = bus.connect('b');
    const c = bus.connect('c');
    const heard: string[] = [];
    b.subscribe('x.*', (m) => {
      heard.push(`b ${m.subject}@${scheduler.nowNs()}`);
      m.respond?.(bytes(7));
    });
    c.subscribe('x.*', (m) => heard.push(`c ${m.subject}@${scheduler.nowNs()}`));
    bus.hold('b', 10_000);
    a.publish('x.one', bytes(1));
    const reply = a.request('x.two', bytes(2), { timeoutMs: 1 }).then((data) => `reply ${data[0]}@${scheduler.nowNs()}`);
    await scheduler.run({});
    expect(await reply).toBe('reply 7@11000');
    expect(heard).toStrictEqual(['c x.one@1000', 'c x.two@1000', 'b x.one@10000', 'b x.two@10000']);
  });

  it('delivers `latencyNs` after the publish, in publish order, to every matching subscription and only while subscribed', async () => {
    const scheduler = new VirtualScheduler();
    const bus = new InMemoryControlBus(scheduler, { latencyNs: 1_000 });
    const a = bus.connect('a');
    const b = bus.connect('b');
    const heard: string[] = [];
    const off = b.subscribe('x.*', (m) => heard.push(`${m.subject}@${scheduler.nowNs()}:${m.data[0]}`));
    b.subscribe('x.>', (m) => heard.push(`all ${m.subject}@${scheduler.nowNs()}`));
    const buffer = bytes(1);
    a.publish('x.one', buffer);
    buffer[0] = 9; // the sender reuses its buffer: receivers still read what was sent
    a.publish('x.two', bytes(2));
    a.publish('y.one', bytes(3));
    await scheduler.run({});
    expect(heard).toStrictEqual(['x.one@1000:1', 'all x.one@1000', 'x.two@1000:2', 'all x.two@1000']);
    off();
    a.publish('x.three', bytes(4));
    await scheduler.run({});
    expect(heard.at(-1)).toBe('all x.three@2000');
    expect(heard.filter((h) => h.startsWith('x.three'))).toStrictEqual([]);
  });

  it('request/reply: the answer comes back a round trip later; no responders and timeouts are typed errors on the clock', async () => {
    const scheduler = new VirtualScheduler();
    const bus = new InMemoryControlBus(scheduler, { latencyNs: 1_000 });
    const server = bus.connect('server');
    const client = bus.connect('client');
    server.subscribe('echo', (m: BusMessage) => m.respond?.(bytes(m.data[0]! + 1)));
    server.subscribe('silent', () => undefined);
    const outcomes: string[] = [];
    const record = (label: string, p: Promise<Uint8Array>) =>
      p.then(
        (reply) => outcomes.push(`${label} ok ${reply[0]} @${scheduler.nowNs()}`),
        (error: unknown) => outcomes.push(`${label} ${(error as { code: string }).code} @${scheduler.nowNs()}`),
      );
    void record('echo', client.request('echo', bytes(41), { timeoutMs: 1 }));
    void record('nobody', client.request('nobody', bytes(0), { timeoutMs: 1 }));
    void record('silent', client.request('silent', bytes(0), { timeoutMs: 1 }));
    await scheduler.run({});
    // the no-responders answer was scheduled before the echo's reply, at the same time: scheduler order
    expect(outcomes).toStrictEqual(['nobody CONTROL_NO_RESPONDERS @2000', 'echo ok 42 @2000', 'silent CONTROL_REQUEST_TIMEOUT @1000000']);
  });

  it('a party that is cut (a crashed process) hears nothing and sends nothing; reconnecting under its name starts afresh', async () => {
    const scheduler = new VirtualScheduler();
    const bus = new InMemoryControlBus(scheduler, { latencyNs: 1_000 });
    const coordinator = bus.connect('coordinator');
    const node = bus.connect('node');
    const heardByCoordinator: string[] = [];
    const heardByNode: string[] = [];
    coordinator.subscribe('hb', (m) => heardByCoordinator.push(m.subject));
    node.subscribe('view', (m) => heardByNode.push(m.subject));
    node.publish('hb', bytes(1));
    bus.cut('coordinator'); // before delivery: the message in flight is lost with the process
    coordinator.publish('view', bytes(1));
    await scheduler.run({});
    expect(heardByCoordinator).toStrictEqual([]);
    expect(heardByNode).toStrictEqual([]);
    await expect(coordinator.request('view', bytes(0), { timeoutMs: 1 })).rejects.toBeInstanceOf(ControlBusClosedError);
    const restarted = bus.connect('coordinator');
    restarted.subscribe('hb', (m) => heardByCoordinator.push(m.subject));
    node.publish('hb', bytes(2));
    await scheduler.run({});
    expect(heardByCoordinator).toStrictEqual(['hb']);
  });

  it('matches a subject against the patterns once until subscriptions change, and keeps subscription order', async () => {
    const scheduler = new VirtualScheduler();
    const bus = new InMemoryControlBus(scheduler, { latencyNs: 1_000 });
    const pub = bus.connect('pub');
    const heard: string[] = [];
    for (const [name, pattern] of [['p', 'hb.*.*'], ['q', 'hb.compute.>'], ['r', 'ctl.x'], ['s', 'hb.compute.1']] as const) bus.connect(name).subscribe(pattern, () => void heard.push(name));
    for (let i = 0; i < 100; i++) pub.publish('hb.compute.1', bytes(i));
    expect(bus.comparisons).toBe(4);
    await scheduler.run();
    expect(heard.slice(0, 3)).toEqual(['p', 'q', 's']);
    expect(heard).toHaveLength(300);
    // A new subscription (and a dropped one) is seen by the next publish.
    const off = bus.connect('t').subscribe('hb.>', () => void heard.push('t'));
    pub.publish('hb.compute.1', bytes(0));
    await scheduler.run();
    off();
    pub.publish('hb.compute.1', bytes(0));
    await scheduler.run();
    expect(bus.comparisons).toBe(4 + 5 + 4);
    expect(heard.slice(300)).toEqual(['p', 'q', 's', 't', 'p', 'q', 's']);
  });

  it('rejects subjects it cannot route', () => {
    const bus = new InMemoryControlBus(new VirtualScheduler()).connect('a');
    expect(() => bus.publish('a..b', bytes())).toThrow(ControlSubjectError);
    expect(() => bus.publish('a.*', bytes())).toThrow(ControlSubjectError);
    expect(() => bus.subscribe('a.>.b', () => undefined)).toThrow(ControlSubjectError);
    expect(new ControlNoRespondersError('s').code).toBe('CONTROL_NO_RESPONDERS');
    expect(new ControlRequestTimeoutError('s', 1).code).toBe('CONTROL_REQUEST_TIMEOUT');
  });
});
