import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { Server as GrpcServer, ServerCredentials } from '@grpc/grpc-js';
import { probeTls } from '@lockfabric/live';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../cluster/local-cluster.js';
import { CutRelay } from './cut-relay.js';

// What the start check's TLS hello gets from a node behind the cut proxy. A cut holds the hello in
// the relay and nothing answers (no answer within the timeout: down); a relay whose node is gone
// accepts and closes (`closed`: down, no longer taken for a plaintext server). A plaintext gRPC
// server through the same relay still answers: what counts as up is an answer from the node itself.
const TIMEOUT_MS = 300;

let relay: CutRelay;
let grpc: GrpcServer;
let silent: Server;
let closing: Server;

const portOf = (server: Server) => {
  const address = server.address();
  return typeof address === 'object' && address ? address.port : 0;
};
const listen = async (server: Server) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

beforeAll(async () => {
  grpc = new GrpcServer();
  const grpcPort = await new Promise<number>((resolve, reject) => grpc.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  silent = createServer(() => undefined);
  closing = createServer((socket) => socket.end());
  await listen(silent);
  await listen(closing);
  const gone = await freePort();
  relay = await CutRelay.start({
    routes: [
      { name: 'compute-1/memory-grpc', server: 'compute-1', listenPort: 0, upstreamPort: grpcPort },
      { name: 'compute-2/memory-grpc', server: 'compute-2', listenPort: 0, upstreamPort: grpcPort },
      { name: 'compute-3/memory-grpc', server: 'compute-3', listenPort: 0, upstreamPort: gone },
    ],
  });
  relay.cut('compute-2');
});
afterAll(async () => {
  await relay?.close();
  grpc?.forceShutdown();
  silent?.close();
  closing?.close();
});

const at = (route: string) => `127.0.0.1:${relay.ports[route]}`;

describe('the TLS hello behind the cut proxy', () => {
  it('reaches the node through a relay that is not cut: the node answers', async () => {
    expect(await probeTls(at('compute-1/memory-grpc'), TIMEOUT_MS)).toBe('plaintext');
  });

  it('gets no answer from a cut node although the relay accepts the connection', async () => {
    expect(await probeTls(at('compute-2/memory-grpc'), TIMEOUT_MS)).toBe('unreachable');
    expect(relay.status().connections.some((c) => c.route === 'compute-2/memory-grpc' && c.cut)).toBe(true);
  });

  it('is closed without an answer by a relay whose node is gone', async () => {
    expect(await probeTls(at('compute-3/memory-grpc'), TIMEOUT_MS)).toBe('closed');
  });

  it('tells a server that accepts and never answers from one that accepts and closes', async () => {
    expect(await probeTls(`127.0.0.1:${portOf(silent)}`, TIMEOUT_MS)).toBe('unreachable');
    expect(await probeTls(`127.0.0.1:${portOf(closing)}`, TIMEOUT_MS)).toBe('closed');
  });
});
