import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { probeTls } from '@lockfabric/live';
import type { TlsProbeOutcome } from '@lockfabric/live';
import { ConfigError, FabricAccessError } from '@lockfabric/ports';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../cluster/local-cluster.js';
import { findDownNodes, survivingComputeNodes } from './reachability.js';
import { downAtDiscovery } from './remote-cluster.js';
import { discoverRemoteCluster } from './remote-discovery.js';
import type { RemoteClusterOptions } from './remote-discovery.js';

// Discovery of a cluster given by address, with fake ports: the probe and Describe are injected,
// the addresses are loopback ports nobody listens on (the transport-security check finds them
// refused and leaves them alone), and one test has a real server that accepts and never answers.

let memoryAt: string;
let computeAt: string[];
let memoryPorts: number[];
let silent: Server;
let silentAt: string;

beforeAll(async () => {
  const [m, c1, c2, c3, d1, d2, d3] = await Promise.all(Array.from({ length: 7 }, () => freePort()));
  memoryAt = `127.0.0.1:${m}`;
  computeAt = [c1, c2, c3].map((p) => `127.0.0.1:${p}`);
  memoryPorts = [d1!, d2!, d3!];
  silent = createServer(() => undefined);
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const address = silent.address();
  silentAt = `127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
afterAll(() => void silent?.close());

/** Compute nodes 1-3 at computeAt, memory node 0; `probe` says which ports answer, `ids` which nodes answer Describe. */
function options(probe: (address: string) => TlsProbeOutcome, asked: string[] = [], ids: readonly (number | undefined)[] = [1, 2, 3]): RemoteClusterOptions {
  return {
    computeNodesAt: [computeAt.join(',')],
    memoryNodesAt: [memoryAt],
    computeMemoryPorts: memoryPorts,
    reach: { probe: async (address) => probe(address), timeoutMs: 200 },
    describeMemory: async (address) => (asked.push(address), 0),
    describeCompute: async (address) => {
      asked.push(address);
      const id = ids[computeAt.indexOf(address)];
      if (id === undefined) throw new Error('UNAVAILABLE: connection refused');
      return id;
    },
  };
}
const unreachable = (...down: string[]) => (address: string): TlsProbeOutcome => (down.some((d) => address === d) ? 'unreachable' : 'tls');

describe('discoverRemoteCluster', () => {
  it('keeps an unreachable compute node under its address, down, and asks only the others their ids', async () => {
    const asked: string[] = [];
    const state = await discoverRemoteCluster(options(unreachable(computeAt[1]!), asked));
    const computes = state.processes.filter((p) => p.role === 'compute');
    expect(computes.map((p) => p.name)).toEqual(['compute-1', `compute@${computeAt[1]}`, 'compute-3']);
    expect(computes.map((p) => p.memoryGrpc)).toEqual(memoryPorts);
    expect(downAtDiscovery(computes[1]!)).toMatch(new RegExp(`${computeAt[1]} refused or did not answer within 200 ms`));
    expect(asked).not.toContain(computeAt[1]);
    // every run of this state leaves it out, even if it answers by then (its id is unknown)
    const down = await findDownNodes(state.processes, { probe: async () => 'tls' });
    expect(down.map((d) => d.name)).toEqual([`compute@${computeAt[1]}`]);
    expect(survivingComputeNodes(computes, down, true).map((c) => c.node)).toEqual([1, 3]);
  });

  it('mutant (strict discovery, as before): the same unreachable node fails the whole run', async () => {
    const failed = await discoverRemoteCluster({ ...options(unreachable(computeAt[1]!), [], [1, undefined, 3]), mutantStrictDiscovery: true }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(FabricAccessError);
    expect((failed as Error).message).toMatch(new RegExp(`compute node ${computeAt[1]} did not answer Describe`));
  });

  it('leaves out a compute node that answers the probe but not Describe', async () => {
    const state = await discoverRemoteCluster(options(() => 'tls', [], [1, 2]));
    const standIn = state.processes.find((p) => p.name === `compute@${computeAt[2]}`);
    expect(standIn && downAtDiscovery(standIn)).toMatch(/did not answer Describe: UNAVAILABLE/);
  });

  it('fails as unreachable, naming them and asking nobody, when a memory node or every compute node is down', async () => {
    const asked: string[] = [];
    await expect(discoverRemoteCluster(options(unreachable(memoryAt), asked))).rejects.toThrow(new RegExp(`memory node down at the start.*memory@${memoryAt}`));
    await expect(discoverRemoteCluster(options(unreachable(...computeAt), asked))).rejects.toThrow(new RegExp(`no compute node is up.*${computeAt.map((a) => `compute@${a}`).join('.*')}`));
    const noneDescribed = await discoverRemoteCluster(options(() => 'tls', asked, [])).catch((e: unknown) => e);
    expect(noneDescribed).toBeInstanceOf(FabricAccessError);
    expect((noneDescribed as Error).message).toMatch(/no compute node is up.*did not answer Describe/);
    expect(asked.filter((a) => a === memoryAt)).toHaveLength(1);
  });

  it('takes a node whose port accepts and never answers as down, within the probe timeout', async () => {
    const state = await discoverRemoteCluster({ ...options(() => 'tls'), computeNodesAt: [`${computeAt[0]},${silentAt}`], computeMemoryPorts: [memoryPorts[0]!, memoryPorts[1]!], reach: { timeoutMs: 200, probe: (address, t) => (address === silentAt ? probeTls(address, t) : Promise.resolve('tls')) } });
    const standIn = state.processes.find((p) => p.name === `compute@${silentAt}`);
    expect(standIn && downAtDiscovery(standIn)).toMatch(/did not answer within 200 ms/);
  });

  it('needs one descriptor-memory port for all compute nodes or one each', async () => {
    const one = await discoverRemoteCluster({ ...options(() => 'tls'), computeMemoryPorts: [50055] });
    expect(one.processes.filter((p) => p.role === 'compute').map((p) => p.memoryGrpc)).toEqual([50055, 50055, 50055]);
    await expect(discoverRemoteCluster({ ...options(() => 'tls'), computeMemoryPorts: [1, 2] })).rejects.toBeInstanceOf(ConfigError);
  });
});
