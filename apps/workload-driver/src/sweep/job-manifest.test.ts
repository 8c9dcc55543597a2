import { readFileSync } from 'node:fs';
import { availableProtocols } from '@lockfabric/lock-catalog';
import { ConfigError } from '@lockfabric/ports';
import { describe, expect, it, vi } from 'vitest';
import { SweepError, sweepCommand } from './command.js';
import { sweepJob } from './job-manifest.js';

describe('sweep job', () => {
  it('the shipped example (validated offline by infra/tests) is what `sweep job` prints for its flags', () => {
    const shipped = JSON.parse(readFileSync(new URL('../../../../infra/k8s/sweep/sweep-job.json', import.meta.url), 'utf8')) as unknown;
    const plan = { protocols: availableProtocols().map((p) => p.id), seeds: 1000, firstSeed: 1, shards: 8, options: {} };
    expect(sweepJob({ plan, name: 'lockfabric-sweep', image: 'lockfabric', resultsClaim: 'lockfabric-sweep-results', parallelism: 8 })).toStrictEqual(shipped);
  });
});

describe('sweep job --kube-context', () => {
  const flags = ['job', '--shards', '2', '--protocol', 'caslock', '--seeds', '10', '--results-claim', 'pvc'];

  it('--dry-run prints the kubectl apply of the same manifest, on the context and namespace given', async () => {
    const printed: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((line: string) => void printed.push(line));
    try {
      expect(await sweepCommand([...flags, '--kube-context', 'lab', '--namespace', 'sweeps', '--dry-run'])).toBe(0);
    } finally {
      log.mockRestore();
    }
    const [first, ...rest] = printed.join('\n').split('\n');
    expect(first).toBe("kubectl --context lab -n sweeps apply -f - <<'EOF'");
    const job = JSON.parse(rest.slice(0, -1).join('\n')) as { metadata: { namespace: string }; spec: { completions: number } };
    expect([job.metadata.namespace, job.spec.completions]).toStrictEqual(['sweeps', 2]);
  });

  it('a context kubectl does not know is a typed error naming it, not a stack trace', async () => {
    const error = await sweepCommand([...flags, '--kube-context', 'no-such-context-lockfabric']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SweepError);
    // kubectl refuses the unknown context; on a machine without kubectl, spawning it fails instead.
    expect((error as SweepError).message).toMatch(/kubectl apply on context no-such-context-lockfabric failed|kubectl: .*ENOENT/);
  });

  it('--dry-run without --kube-context is a configuration error', async () => {
    await expect(sweepCommand([...flags, '--dry-run'])).rejects.toThrow(ConfigError);
  });
});
