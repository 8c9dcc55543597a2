import { connectNats, silentLogger } from '@lockfabric/live';
import { startNatsServer } from '@lockfabric/testkit';
import type { NatsServerHandle } from '@lockfabric/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CutProxyClient, CutProxyError } from './cut-client.js';
import { startCutControl } from './cut-control.js';
import type { CutControlServer } from './cut-control.js';
import { CutRelay, parseRoute } from './cut-relay.js';

// A partial partition against a real nats-server: the relayed client (attributed as compute-2)
// stops hearing one subject, keeps hearing the others and keeps publishing, until the heal.
describe('partition --subjects: the cut proxy drops chosen NATS deliveries, nothing else', () => {
  let nats: NatsServerHandle;
  let relay: CutRelay;
  let control: CutControlServer;
  let proxy: CutProxyClient;

  beforeAll(async () => {
    nats = await startNatsServer();
    relay = await CutRelay.start({ routes: [parseRoute(`nats=nats:0:${nats.port}`)], attribute: () => 'compute-2' });
    control = await startCutControl(relay);
    proxy = new CutProxyClient(control.port);
  });
  afterAll(async () => {
    await control?.close();
    await relay?.close();
    await nats?.stop();
  });

  it('drops deliveries on the patterns while it lasts; requests time out, heartbeats flow both ways; the heal restores them', async () => {
    const target = await connectNats({ servers: `nats://127.0.0.1:${relay.ports['nats']}`, name: 'target', logger: silentLogger });
    const peer = await connectNats({ servers: nats.url, name: 'peer', logger: silentLogger });
    try {
      const heard: string[] = [];
      target.subscribe('lf.t.ctl.fiss.2.*', { callback: (_e, m) => void m.respond(new TextEncoder().encode('ok')) });
      target.subscribe('lf.t.hb.>', { callback: (_e, m) => void heard.push(m.subject) });
      const fromTarget: string[] = [];
      peer.subscribe('lf.t.hb.>', { callback: (_e, m) => void fromTarget.push(m.subject) });
      await target.flush();
      await peer.flush();

      const ask = () => peer.request('lf.t.ctl.fiss.2.pause', new Uint8Array(), { timeout: 300 }).then(
        (m) => new TextDecoder().decode(m.data),
        () => 'timeout',
      );
      expect(await ask()).toBe('ok');

      const order = await proxy.drop('compute-2', ['lf.t.ctl.fiss.2.>'], 60_000);
      expect(order.connections).toBe(1);
      expect(await ask()).toBe('timeout');
      expect(await ask()).toBe('timeout');
      peer.publish('lf.t.hb.coordinator');
      target.publish('lf.t.hb.compute-2');
      await peer.flush();
      await target.flush();
      await waitUntil(() => heard.includes('lf.t.hb.coordinator') && fromTarget.includes('lf.t.hb.compute-2'));
      expect((await proxy.status()).drops).toStrictEqual([{ target: 'compute-2', subjects: ['lf.t.ctl.fiss.2.>'], dropped: 2 }]);

      const healed = await proxy.heal('compute-2');
      expect(healed.droppedMessages).toBe(2);
      expect(await ask()).toBe('ok');
      expect((await proxy.status()).drops).toStrictEqual([]);
    } finally {
      await target.close();
      await peer.close();
    }
  });

  it('refuses bad drop orders with the problem named', async () => {
    await expect(proxy.drop('compute-2', [], 1_000)).rejects.toThrow(/subjects: 1 to 16 NATS subject patterns/);
    await expect(proxy.drop('compute-2', ['a.>.b'], 1_000)).rejects.toThrow(/"a\.>\.b" is not a NATS subject pattern/);
    await expect(proxy.drop('compute two', ['a'], 0)).rejects.toBeInstanceOf(CutProxyError);
  });
});

async function waitUntil(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
}
