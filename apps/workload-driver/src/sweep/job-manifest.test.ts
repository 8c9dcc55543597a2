import { readFileSync } from 'node:fs';
import { availableProtocols } from '@lockfabric/lock-catalog';
import { describe, expect, it } from 'vitest';
import { sweepJob } from './job-manifest.js';

describe('sweep job', () => {
  it('the shipped example (validated offline by infra/tests) is what `sweep job` prints for its flags', () => {
    const shipped = JSON.parse(readFileSync(new URL('../../../../infra/k8s/sweep/sweep-job.json', import.meta.url), 'utf8')) as unknown;
    const plan = { protocols: availableProtocols().map((p) => p.id), seeds: 1000, firstSeed: 1, shards: 8, options: {} };
    expect(sweepJob({ plan, name: 'lockfabric-sweep', image: 'lockfabric', resultsClaim: 'lockfabric-sweep-results', parallelism: 8 })).toStrictEqual(shipped);
  });
});
