import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INFRA_DIR, hardeningProblems, readYamlDocs, schemaProblems, sweepJobProblems } from '../src/index.js';
import type { Doc } from '../src/yaml-docs.js';

// infra/k8s/sweep/sweep-job.json is `lockfabric sweep job --shards 8 --protocol all --seeds 1000
// --results-claim lockfabric-sweep-results`; a workload-driver test keeps it equal to the generator.
const [job] = readYamlDocs(join(INFRA_DIR, 'k8s', 'sweep', 'sweep-job.json'));
const clone = (): Doc => JSON.parse(JSON.stringify(job)) as Doc;
const spec = (o: Doc) => o['spec'] as Doc;
const container = (o: Doc) => ((spec(o)['template'] as Doc)['spec'] as { containers: { args: string[] }[] }).containers[0]!;

describe('the sweep Indexed Job', () => {
  it('validates against the real Job schema (strict) and the hardening rules', () => {
    expect(job?.['kind']).toBe('Job');
    expect(schemaProblems(job!)).toStrictEqual([]);
    expect(hardeningProblems([job!])).toStrictEqual([]);
    expect(sweepJobProblems(job!)).toStrictEqual([]);
  });

  it('catches the mutants: not Indexed, completions unlike --shards, a fixed --index, results on an emptyDir', () => {
    const notIndexed = clone();
    delete spec(notIndexed)['completionMode'];
    expect(sweepJobProblems(notIndexed)).toStrictEqual([expect.stringMatching(/completionMode is not Indexed/)]);
    const fewer = clone();
    spec(fewer)['completions'] = 7;
    expect(sweepJobProblems(fewer)).toStrictEqual([expect.stringMatching(/completions 7 differ from --shards=8/)]);
    const fixed = clone();
    container(fixed).args.push('--index=0');
    expect(sweepJobProblems(fixed)).toStrictEqual([expect.stringMatching(/--index is fixed/)]);
    const ephemeral = clone();
    const volumes = ((spec(ephemeral)['template'] as Doc)['spec'] as { volumes: Doc[] }).volumes;
    volumes[0] = { name: 'results', emptyDir: {} };
    expect(sweepJobProblems(ephemeral)).toStrictEqual([expect.stringMatching(/not on a PersistentVolumeClaim/)]);
  });
});
