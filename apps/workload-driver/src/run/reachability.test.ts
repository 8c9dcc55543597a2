import { describe, expect, it } from 'vitest';
import { FabricAccessError } from '@lockfabric/ports';
import type { ProcessRecord } from '../cluster/local-cluster.js';
import { findDownNodes, portsToProbe, survivingComputeNodes } from './reachability.js';

const memory: ProcessRecord = { name: 'memory-0', role: 'memory', node: 0, pid: 10, log: '', argv: [], grpc: 5000, clientsGrpc: 5001 };
const compute = (node: number, pid = 100 + node): ProcessRecord => ({ name: `compute-${node}`, role: 'compute', node, pid, log: '', argv: [], grpc: 6000 + node, memoryGrpc: 7000 + node });

describe('findDownNodes', () => {
  it('probes the ports peers use: a memory node its verbs port, a compute node its run and descriptor ports', () => {
    expect(portsToProbe(memory)).toEqual(['127.0.0.1:5000']);
    expect(portsToProbe(compute(2))).toEqual(['127.0.0.1:6002', '127.0.0.1:7002']);
  });

  it('finds a node whose port does not answer, and words the reason by its pid', async () => {
    const down = await findDownNodes([memory, compute(1), compute(2, 0), compute(3)], {
      running: (pid) => pid !== 101,
      probe: async (address) => (address === '127.0.0.1:7003' || address === '127.0.0.1:6001' ? 'unreachable' : 'tls'),
      timeoutMs: 50,
    });
    expect(down.map((d) => d.name)).toEqual(['compute-1', 'compute-3']);
    expect(down[0]?.reason).toMatch(/pid 101\) is not running and 127\.0\.0\.1:6001 refused/);
    expect(down[1]?.reason).toContain('127.0.0.1:7003');
  });

  it('takes a node whose ports answer as up even when the pid it was read with has gone (restarted since)', async () => {
    // the record was read before `chaos restart`: old pid, same ports, a new process behind them
    expect(await findDownNodes([memory, compute(1)], { running: () => false, probe: async () => 'tls' })).toEqual([]);
  });

  it('counts a plaintext answer as up: the node is there, transport security is checked elsewhere', async () => {
    expect(await findDownNodes([compute(1)], { running: () => true, probe: async () => 'plaintext' })).toEqual([]);
  });

  it('counts a connection closed without an answer as down: a relay in front of a node that is gone', async () => {
    const down = await findDownNodes([memory, compute(1)], { running: () => true, probe: async (address) => (address === '127.0.0.1:5000' ? 'closed' : 'tls') });
    expect(down.map((d) => d.name)).toEqual(['memory-0']);
    expect(down[0]?.reason).toMatch(/127\.0\.0\.1:5000 accepted the connection and closed it without answering/);
  });

  it('takes a remote node discovery could not ask its id as down without probing it, even if it answers now', async () => {
    const probed: string[] = [];
    const standIn = { ...compute(-2), name: 'compute@10.0.0.2:50052', pid: 0, host: '10.0.0.2', downAtDiscovery: '10.0.0.2:50052 refused' };
    const down = await findDownNodes([compute(1), standIn], { probe: async (address) => (probed.push(address), 'tls') });
    expect(down).toEqual([{ node: -2, name: 'compute@10.0.0.2:50052', role: 'compute', reason: '10.0.0.2:50052 refused' }]);
    expect(probed).toEqual(['127.0.0.1:6001', '127.0.0.1:7001']);
  });
});

describe('survivingComputeNodes', () => {
  const computes = [compute(1), compute(2), compute(3)];
  const downCompute = (node: number) => ({ node, name: `compute-${node}`, role: 'compute' as const, reason: 'gone' });

  it('leaves the down compute nodes out of a fault-tolerant run', () => {
    expect(survivingComputeNodes(computes, [downCompute(2)], true).map((c) => c.node)).toEqual([1, 3]);
  });

  it('fails as unreachable when a memory node or every compute node is down, or any is in a strict run', () => {
    const memoryDown = { node: 0, name: 'memory-0', role: 'memory' as const, reason: 'gone' };
    expect(() => survivingComputeNodes(computes, [memoryDown], true)).toThrow(/memory node down at the start.*memory-0/);
    expect(() => survivingComputeNodes(computes, computes.map((c) => downCompute(c.node)), true)).toThrow(/no compute node is up.*compute-1.*compute-2.*compute-3/);
    expect(() => survivingComputeNodes(computes, [downCompute(2)], false)).toThrow(FabricAccessError);
  });
});
