import { createHash, randomBytes } from 'node:crypto';
import { Socket, createServer } from 'node:net';
import type { Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CutProxyClient, CutProxyError } from './cut-client.js';
import { startCutControl } from './cut-control.js';
import type { CutControlServer } from './cut-control.js';
import { CutRelay, parseRoute } from './cut-relay.js';
import type { ClientAttribution } from './cut-relay.js';
import { clientSocketInode, procAttribution } from './proc-attribution.js';

/** A server that records what each accepted connection sent and answers every chunk with `ack:<bytes>`. */
interface Upstream {
  readonly port: number;
  readonly received: Buffer[][];
  /** The server side of each accepted connection, to speak first. */
  readonly sockets: Socket[];
  bytes(connection: number): Buffer;
  close(): Promise<void>;
}

async function startUpstream(): Promise<{ upstream: Upstream; server: Server }> {
  const received: Buffer[][] = [];
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
    const mine: Buffer[] = [];
    received.push(mine);
    socket.on('data', (chunk: Buffer) => {
      mine.push(chunk);
      socket.write(`ack:${chunk.length};`);
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    server,
    upstream: {
      port,
      received,
      sockets,
      bytes: (i) => Buffer.concat(received[i] ?? []),
      close: async () => {
        for (const s of sockets) s.destroy();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      },
    },
  };
}

async function connect(port: number): Promise<{ socket: Socket; received: () => string }> {
  const socket = new Socket();
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  socket.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.connect(port, '127.0.0.1', () => resolve());
  });
  return { socket, received: () => text };
}

async function until(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A relay with one route to a fresh upstream served by `memory-0`; clients are attributed by `attribute`. */
async function relayed(options: { attribute?: ClientAttribution; maxHeldBytes?: number } = {}) {
  const { upstream } = await startUpstream();
  cleanups.push(() => upstream.close());
  const relay = await CutRelay.start({ routes: [{ name: 'memory-0/grpc', server: 'memory-0', listenPort: 0, upstreamPort: upstream.port }], ...options });
  cleanups.push(() => relay.close());
  const port = relay.ports['memory-0/grpc']!;
  return { relay, upstream, port };
}

describe('CutRelay', () => {
  it('relays both ways while nothing is cut', async () => {
    const { upstream, port } = await relayed();
    const client = await connect(port);
    cleanups.push(() => void client.socket.destroy());
    client.socket.write('hello');
    await until(() => client.received() === 'ack:5;', 'the answer');
    expect(upstream.bytes(0).toString()).toBe('hello');
  });

  it('a cut server holds bytes both ways without closing, and a heal delivers them in order', async () => {
    const { relay, upstream, port } = await relayed();
    const client = await connect(port);
    cleanups.push(() => void client.socket.destroy());
    client.socket.write('before');
    await until(() => client.received() === 'ack:6;', 'the answer before the cut');

    expect(relay.cut('memory-0')).toBe(1);
    client.socket.write('during-1');
    client.socket.write('during-2');
    await until(() => relay.status().connections[0]?.heldUpBytes === 16, 'the relay to hold both writes');
    // Held, not forwarded, and nobody closed anything.
    expect(upstream.bytes(0).toString()).toBe('before');
    expect(client.socket.destroyed).toBe(false);
    expect(relay.status()).toMatchObject({ cut: ['memory-0'], connections: [{ server: 'memory-0', cut: true }] });

    const report = relay.heal('memory-0');
    expect(report).toMatchObject({ target: 'memory-0', connections: 1, releasedBytes: 16 });
    await until(() => upstream.bytes(0).toString() === 'beforeduring-1during-2', 'the held bytes at the server');
    await until(() => client.received().startsWith('ack:6;ack:'), 'answers after the heal');
    expect(relay.status().cut).toStrictEqual([]);
  });

  it('holds the server side too: bytes towards a cut client wait in the relay', async () => {
    const { relay, upstream, port } = await relayed({ attribute: () => 'compute-2' });
    const client = await connect(port);
    cleanups.push(() => void client.socket.destroy());
    await until(() => upstream.sockets.length === 1, 'the upstream connection');
    relay.cut('compute-2');
    upstream.sockets[0]!.write('pushed');
    await until(() => relay.status().connections[0]?.heldDownBytes === 6, 'the push held');
    expect(client.received()).toBe('');
    relay.heal('compute-2');
    await until(() => client.received() === 'pushed', 'the push after the heal');
  });

  it('cuts a client by attribution and leaves other clients of the same server alone', async () => {
    let next = 0;
    const names = ['compute-2', 'compute-1'];
    const { relay, upstream, port } = await relayed({ attribute: () => names[next++] });
    const cutOff = await connect(port);
    const other = await connect(port);
    cleanups.push(() => void cutOff.socket.destroy(), () => void other.socket.destroy());
    await until(() => relay.status().connections.length === 2 && upstream.received.length === 2, 'both connections');
    relay.cut('compute-2');
    cutOff.socket.write('late');
    other.socket.write('fine');
    await until(() => other.received() === 'ack:4;', 'the uncut client served');
    await until(() => relay.status().connections.some((c) => c.client === 'compute-2' && c.heldUpBytes === 4), 'the cut client held');
    expect(relay.status().connections.find((c) => c.client === 'compute-1')).toMatchObject({ cut: false, heldUpBytes: 0 });
    relay.heal('compute-2');
    await until(() => cutOff.received() === 'ack:4;', 'the cut client served after the heal');
  });

  it('names a connection it could not attribute at accept when an order comes, and cuts it', async () => {
    let known = false;
    const { relay, upstream, port } = await relayed({ attribute: () => (known ? 'compute-2' : undefined) });
    const client = await connect(port);
    cleanups.push(() => void client.socket.destroy());
    await until(() => relay.status().connections.length === 1 && upstream.sockets.length === 1, 'the connection');
    expect(relay.status().connections[0]?.client).toBeUndefined();
    known = true;
    expect(relay.cut('compute-2')).toBe(1);
    client.socket.write('late');
    await until(() => relay.status().connections[0]?.heldUpBytes === 4, 'the write held');
    expect(relay.status().connections[0]).toMatchObject({ client: 'compute-2', cut: true });
    relay.heal('compute-2');
    await until(() => client.received() === 'ack:4;', 'served after the heal');
  });

  it('bounds what it holds: past maxHeldBytes the sender is back-pressured, and nothing is lost', async () => {
    const maxHeldBytes = 64 * 1024;
    const { relay, upstream, port } = await relayed({ maxHeldBytes });
    const client = await connect(port);
    cleanups.push(() => void client.socket.destroy());
    await until(() => upstream.received.length === 1, 'the upstream connection');
    relay.cut('memory-0');
    const payload = randomBytes(8 * 1024 * 1024);
    client.socket.write(payload);
    await until(() => (relay.status().connections[0]?.heldUpBytes ?? 0) >= maxHeldBytes, 'the relay to fill its bound');
    const held = relay.status().connections[0]!.heldUpBytes;
    // At most one more read than the bound (a read is at most 64 KiB); the rest waits in the kernel and the sender.
    expect(held).toBeLessThanOrEqual(maxHeldBytes + 64 * 1024);
    expect(held).toBeLessThan(payload.length);
    expect(upstream.bytes(0).length).toBe(0);
    relay.heal('memory-0');
    await until(() => upstream.bytes(0).length === payload.length, 'every byte at the server', 20_000);
    expect(createHash('sha256').update(upstream.bytes(0)).digest('hex')).toBe(createHash('sha256').update(payload).digest('hex'));
  });

  it('accepts a connection opened during a cut but lets it reach its server only at the heal', async () => {
    const { relay, upstream, port } = await relayed();
    relay.cut('memory-0');
    const client = await connect(port);
    cleanups.push(() => void client.socket.destroy());
    client.socket.write('early');
    await until(() => relay.status().connections[0]?.heldUpBytes === 5, 'the bytes held');
    expect(upstream.received).toHaveLength(0);
    relay.heal('memory-0');
    await until(() => upstream.bytes(0).toString() === 'early', 'the connection and bytes at the server');
    await until(() => client.received() === 'ack:5;', 'the answer');
  });

  it('a close behind a cut reaches the server only at the heal', async () => {
    const { relay, upstream, port } = await relayed();
    const client = await connect(port);
    await until(() => upstream.received.length === 1, 'the upstream connection');
    relay.cut('memory-0');
    client.socket.destroy();
    await until(() => relay.status().connections[0]?.clientClosed === true, 'the relay to see the client close');
    expect(relay.status().connections).toHaveLength(1);
    expect(upstream.sockets[0]!.destroyed || upstream.sockets[0]!.readableEnded).toBe(false);
    relay.heal('memory-0');
    await until(() => relay.status().connections.length === 0, 'the connection gone after the heal');
  });

  it('refuses duplicate route names and reads --route flags strictly', async () => {
    await expect(
      CutRelay.start({
        routes: [
          { name: 'a', server: 'memory-0', listenPort: 0, upstreamPort: 1 },
          { name: 'a', server: 'memory-1', listenPort: 0, upstreamPort: 2 },
        ],
      }),
    ).rejects.toThrow(/listed twice/);
    expect(parseRoute('memory-0/grpc=memory-0:41000:41001')).toStrictEqual({ name: 'memory-0/grpc', server: 'memory-0', listenPort: 41000, upstreamPort: 41001 });
    for (const bad of ['memory-0:1:2', 'a=memory-0:1', 'a=Memory 0:1:2', 'a=memory-0:1:2:3', 'a=memory-0:123456:1']) expect(() => parseRoute(bad), bad).toThrow(RangeError);
  });
});

describe('cut proxy control endpoint', () => {
  async function control(): Promise<{ relay: CutRelay; server: CutControlServer; client: CutProxyClient }> {
    const { relay } = await relayed();
    const server = await startCutControl(relay, 0);
    cleanups.push(() => server.close());
    return { relay, server, client: new CutProxyClient(server.port) };
  }

  const post = (port: number, path: string, body: string) => fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', body });

  it('cuts, reports, heals on order', async () => {
    const { relay, client } = await control();
    await expect(client.cut('compute-2', 60_000)).resolves.toMatchObject({ target: 'compute-2', durationMs: 60_000 });
    expect(relay.isCut('compute-2')).toBe(true);
    expect((await client.status()).cut).toStrictEqual(['compute-2']);
    await expect(client.heal('compute-2')).resolves.toMatchObject({ target: 'compute-2' });
    expect(relay.isCut('compute-2')).toBe(false);
  });

  it('closes the connection after each answer, so a later order never reuses a socket the server is closing', async () => {
    const { server } = await control();
    const socket = new Socket();
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    const ended = new Promise<void>((resolve, reject) => {
      socket.once('end', () => resolve());
      socket.once('error', reject);
    });
    socket.connect(server.port, '127.0.0.1', () => socket.write('GET /status HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n'));
    await ended;
    socket.destroy();
    const head = answer.split('\r\n\r\n')[0]!.toLowerCase().split('\r\n');
    expect(head[0]).toBe('http/1.1 200 ok');
    expect(head).toContain('connection: close');
  });

  it('heals by itself once the duration is over', async () => {
    const { relay, client } = await control();
    await client.cut('compute-2', 20);
    await until(() => !relay.isCut('compute-2'), 'the proxy to heal on its own');
  });

  it('refuses bad orders with 4xx naming the problem, and keeps serving', async () => {
    const { relay, server, client } = await control();
    const cases: [string, string, number, RegExp][] = [
      ['/cut', 'not json', 400, /not JSON/],
      ['/cut', '[1]', 400, /JSON object/],
      ['/cut', '{"target":"compute-2"}', 400, /durationMs/],
      ['/cut', '{"target":"compute-2","durationMs":-5}', 400, /durationMs/],
      ['/cut', '{"target":"compute-2","durationMs":1.5}', 400, /durationMs/],
      ['/cut', '{"target":"; rm -rf /","durationMs":5}', 400, /target/],
      ['/heal', '{}', 400, /target/],
      ['/explode', '{}', 404, /no such control request/],
      ['/cut', JSON.stringify({ target: 'compute-2', durationMs: 5, pad: 'x'.repeat(10_000) }), 413, /larger than/],
    ];
    for (const [path, body, status, message] of cases) {
      const response = await post(server.port, path, body);
      expect(response.status, `${path} ${body.slice(0, 40)}`).toBe(status);
      expect(((await response.json()) as { error: string }).error).toMatch(message);
    }
    expect(relay.status().cut).toStrictEqual([]);
    await expect(client.status()).resolves.toMatchObject({ cut: [] });
    await expect(client.cut('compute-2', 0)).rejects.toThrow(CutProxyError);
  });

  it('says clearly when no proxy answers', async () => {
    const { server } = await control();
    const port = server.port;
    await server.close();
    await expect(new CutProxyClient(port, 1_000).status()).rejects.toThrow(/does not answer/);
  });
});

describe('attribution through /proc', () => {
  const table = [
    '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
    '   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 11111 1 0000000000000000 100 0 0 10 0',
    '   1: 0100007F:A000 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 22222 1 0000000000000000 20 4 30 10 -1',
    '   2: 0100007F:1F90 0100007F:A000 01 00000000:00000000 00:00000000 00000000  1000        0 33333 1 0000000000000000 20 4 30 10 -1',
  ].join('\n');

  it('finds the client end of a connection, not the listener or the server end', () => {
    // Client port 0xA000 = 40960 connected to 0x1F90 = 8080.
    expect(clientSocketInode(table, 40960, 8080)).toBe('22222');
    expect(clientSocketInode(table, 8080, 40960)).toBe('33333');
    expect(clientSocketInode(table, 40961, 8080)).toBeUndefined();
  });

  it('names this very process as the client of a real connection', async () => {
    const attribute = procAttribution(() => [
      { name: 'someone-else', pid: 1 },
      { name: 'me', pid: process.pid },
    ]);
    // A process that is not a candidate is never blamed.
    const strangers = procAttribution(() => [{ name: 'someone-else', pid: 1 }]);
    const seen: (string | undefined)[][] = [];
    const { relay, port } = await relayed({ attribute: (socket) => (seen.push([attribute(socket), strangers(socket)]), seen.at(-1)?.[0]) });
    const client = await connect(port);
    cleanups.push(() => void client.socket.destroy());
    await until(() => relay.status().connections.length === 1, 'the connection');
    expect(seen).toStrictEqual([['me', undefined]]);
    expect(relay.status().connections[0]?.client).toBe('me');
  });
});
