import { describe, expect, it } from 'vitest';
import { applyFault } from './executor.js';
import { KubeActionError, KubeChaos } from './kube-chaos.js';

function recording(fail?: RegExp): { chaos: KubeChaos; lines: string[][] } {
  const lines: string[][] = [];
  const chaos = new KubeChaos(
    { context: 'lab', namespace: 'lf', memoryNodes: 2 },
    async (plan) => {
      lines.push([...plan]);
      if (fail && plan.some((l) => fail.test(l))) throw new KubeActionError('kubectl plan failed (exit 1): forbidden');
      return '';
    },
    'lf-cli',
  );
  return { chaos, lines };
}

const K = 'kubectl --context lab -n lf';
const noSleep = async () => undefined;

describe('KubeChaos: the nemesis on Kubernetes', () => {
  it('heals a kill by waiting for the replacement pod, not by deleting it again', async () => {
    const { chaos, lines } = recording();
    const done = await applyFault({ id: 'f1', kind: 'kill', target: 'compute-3', atMs: 0, durationMs: 10 }, { chaos, nowNs: () => 0, sleep: noSleep });
    expect(done.error).toBeUndefined();
    expect(lines).toEqual([
      [`${K} delete pod -l statefulset.kubernetes.io/pod-name=compute-node-1 --grace-period=0 --force --wait=false`],
      [`${K} wait --for=condition=Ready pod -l statefulset.kubernetes.io/pod-name=compute-node-1 --timeout=120s`],
    ]);
  });

  it('a restart that follows no kill deletes gracefully and waits; a pause is healed by a resume', async () => {
    const { chaos, lines } = recording();
    await applyFault({ id: 'f1', kind: 'memory-restart', target: 'memory-1', atMs: 0, durationMs: 10 }, { chaos, nowNs: () => 0, sleep: noSleep });
    await applyFault({ id: 'f2', kind: 'pause', target: 'compute-2', atMs: 0, durationMs: 10 }, { chaos, nowNs: () => 0, sleep: noSleep });
    expect(lines[0]).toEqual([`${K} delete pod -l statefulset.kubernetes.io/pod-name=memory-node-1 --wait=true`, `${K} wait --for=condition=Ready pod -l statefulset.kubernetes.io/pod-name=memory-node-1 --timeout=120s`]);
    expect(lines[1]![0]).toContain("pod-name=compute-node-0 -o name) -c lockfabric -- sh -c 'kill -STOP $(pidof node)'");
    expect(lines[2]![0]).toContain("kill -CONT");
  });

  it('switch faults run this CLI through a port-forward, and are cleared after the window', async () => {
    const { chaos, lines } = recording();
    await applyFault({ id: 'f1', kind: 'switch-loss', target: 'switch', atMs: 0, durationMs: 10 }, { chaos, nowNs: () => 0, sleep: noSleep });
    expect(lines[0]![2]).toBe('lf-cli chaos switch-faults --switch-grpc 127.0.0.1:15053 --loss 0.05 --direction both');
    expect(lines[1]![2]).toBe('lf-cli chaos switch-faults --switch-grpc 127.0.0.1:15053 --clear');
  });

  it('a failed kubectl plan is recorded on the fault, not thrown', async () => {
    const { chaos } = recording(/delete pod/);
    const done = await applyFault({ id: 'f1', kind: 'kill', target: 'compute-2', atMs: 0, durationMs: 10 }, { chaos, nowNs: () => 0, sleep: noSleep });
    expect(done.error).toMatch(/forbidden/);
  });

  it('heal resumes every target, removes partition policies and waits for every app pod', async () => {
    const { chaos, lines } = recording();
    const done = await chaos.healAll(['compute-2', 'nats']);
    expect(lines.map((l) => l[0])).toEqual([
      expect.stringContaining('kill -CONT'),
      `${K} delete networkpolicy -l lockfabric.io/partition=true --ignore-not-found`,
      `${K} wait --for=condition=Ready pod -l app.kubernetes.io/component=lockfabric-app --timeout=120s`,
    ]);
    expect(done).toEqual([expect.stringContaining('resume compute-2'), 'partitions removed', 'every app pod Ready']);
  });
});
