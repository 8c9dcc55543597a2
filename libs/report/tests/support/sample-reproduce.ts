import type { ExperimentResult, ReproduceResult } from '../../src/reproduce/model.js';

const line = (name: string, scale: number, xs: readonly number[]) => ({ name, points: xs.map((x) => ({ x, y: scale * Math.sqrt(x) })) });

export const CLIENTS = [8, 32, 64, 128, 256];

export function sampleExperiment(over: Partial<ExperimentResult> = {}): ExperimentResult {
  return {
    id: 'declock-fig9',
    figure: 'DecLock Fig. 9',
    title: 'goodput as clients grow',
    params: { locks: 1000, skew: 0.99, quick: true },
    x: { field: 'clients', label: 'clients', scale: 'log' },
    y: { field: 'goodput', label: 'goodput (Mops/s)', scale: 'linear' },
    series: [line('declock', 1, CLIENTS), line('caslock', 0.4, CLIENTS)],
    paperSeries: [line('declock', 1.2, [8, 64, 256]), line('caslock', 0.3, [8, 64, 256])],
    claims: [
      { id: 'c1', text: 'DecLock/CASLock goodput at 256 clients', paper: 4, ours: 2.5, unit: '×', sameDirection: true, deviation: -0.375, verdict: 'same-direction', note: 'fewer NIC queues than the paper' },
      { id: 'c2', text: 'DecLock verbs per acquire', paper: 1.2, ours: 1.25, unit: '', sameDirection: true, deviation: 0.04, verdict: 'reproduced' },
    ],
    wallMs: 1234,
    ...over,
  };
}

export function sampleReproduce(): ReproduceResult {
  return {
    kind: 'reproduce',
    version: 1,
    quick: true,
    startedAt: '2026-11-29T01:00:00.000Z',
    wallMs: 61_000,
    papers: [
      { paper: 'declock', title: 'DecLock (queue-notify locking on disaggregated memory)', experiments: [sampleExperiment()] },
      {
        paper: 'dslr',
        title: 'DSLR (bakery locks on RDMA)',
        experiments: [
          sampleExperiment({
            id: 'dslr-fig6',
            figure: 'DSLR Fig. 6',
            x: { field: 'skew', label: 'zipf θ', scale: 'linear' },
            series: [line('dslr', 2, [0, 0.5, 0.9, 0.99])],
            paperSeries: [],
            claims: [{ id: 'c3', text: 'DSLR beats CAS under skew', paper: 2, ours: 0.8, unit: '×', sameDirection: false, deviation: -0.6, verdict: 'opposite' }],
          }),
        ],
      },
    ],
  };
}
