// Expands the chosen experiments into sim runs, runs each distinct run once (experiments that plot
// other figures of the same runs share them), and assembles the ReproduceResult.
import { availableProtocols } from '@lockfabric/lock-catalog';
import type { Claim, ExperimentResult, PaperResult, ReproduceResult, Series } from './contract.js';
import type { ExperimentDef, Measure, PaperDef, PointJob, Scale } from './experiment.js';
import { runPointJobs } from './jobs.js';
import type { CostModel } from '@lockfabric/fabric';
import { judge, unitOf } from './verdict.js';

export interface ReproducePlan {
  readonly papers: readonly PaperDef[];
  readonly scale: Scale;
  readonly workers: number;
  /** The hardware every run is charged with; absent: the cluster's defaults (`ideal`). */
  readonly costModel?: CostModel;
}

interface Planned {
  readonly experiment: ExperimentDef;
  /** Series of this build's protocols; the others are named in params.skipped. */
  readonly present: ExperimentDef['series'];
  readonly missing: readonly string[];
  /** Per present series, per x: the index of its job. */
  readonly jobIndex: readonly (readonly number[])[];
}

export interface ExpandedPlan {
  readonly jobs: readonly PointJob[];
  readonly planned: readonly (readonly Planned[])[];
}

/** Every distinct run the plan needs, in a fixed order. */
export function expand(plan: ReproducePlan, known: ReadonlySet<string> = new Set(availableProtocols().map((p) => p.id))): ExpandedPlan {
  const jobs: PointJob[] = [];
  const byKey = new Map<string, number>();
  const planned = plan.papers.map((paper) =>
    paper.experiments.map((experiment): Planned => {
      const present = experiment.series.filter((s) => known.has(s.protocol));
      const missing = experiment.series.filter((s) => !known.has(s.protocol)).map((s) => s.name);
      const jobIndex = present.map((series) =>
        experiment.xs[plan.scale].map((x) => {
          const made = experiment.job(series, x, plan.scale);
          const job = plan.costModel ? { ...made, costModel: plan.costModel } : made;
          const key = JSON.stringify(job);
          let index = byKey.get(key);
          if (index === undefined) {
            index = jobs.push(job) - 1;
            byKey.set(key, index);
          }
          return index;
        }),
      );
      return { experiment, present, missing, jobIndex };
    }),
  );
  return { jobs, planned };
}

/** A rough wall-time estimate on one core, from the operations of the runs (about 0.1 ms of wall time per simulated acquire, 0.4 ms per transaction). */
export function estimateMs(jobs: readonly PointJob[]): number {
  return jobs.reduce((sum, j) => sum + 60 + (j.recovery ? j.recovery.heldLocks * 0.01 : 0) + (j.spec.operations ?? 10_000) * (j.spec.transactions ? 0.4 : 0.1) * (j.lockManagerCpu ? 2 : 1), 0);
}

export async function runReproduce(plan: ReproducePlan, onProgress: (done: number, total: number) => void = () => {}): Promise<ReproduceResult> {
  const startedAt = new Date().toISOString();
  const started = performance.now();
  const expanded = expand(plan);
  const measures = await runPointJobs(expanded.jobs, plan.workers, (done) => onProgress(done, expanded.jobs.length));
  const papers = plan.papers.map((paper, p): PaperResult => ({ paper: paper.paper, title: paper.title, experiments: expanded.planned[p]!.map((e) => assemble(e, measures, plan.scale)) }));
  return { kind: 'reproduce', version: 1, quick: plan.scale !== 'full', startedAt, wallMs: performance.now() - started, ...(plan.costModel ? { costModel: plan.costModel.name } : {}), papers };
}

/** One experiment's result from the measured runs. */
export function assemble(planned: Planned, measures: readonly Measure[], scale: Scale): ExperimentResult {
  const { experiment, present, missing, jobIndex } = planned;
  const xs = experiment.xs[scale];
  const field = experiment.y.field;
  const series: Series[] = present.map((s, i) => ({
    name: s.name,
    points: xs.map((x, k) => ({ x, y: measures[jobIndex[i]![k]!]![field] })).filter((pt) => Number.isFinite(pt.y)),
  }));
  const lookup = (name: string, x: number): number => series.find((s) => s.name === name)?.points.find((pt) => pt.x === x)?.y ?? NaN;
  const presentNames = new Set(present.map((s) => s.name));
  const claims: Claim[] = experiment.claims
    .filter((c) => c.uses.every((name) => presentNames.has(name)))
    .map((c) => {
      const ours = c.ours(lookup, xs);
      const judged = judge(c.kind, c.paper, ours);
      const note = !Number.isFinite(ours) ? 'not measured: a run of this claim produced no value' : judged.verdict !== 'reproduced' ? c.note : undefined;
      return { id: c.id, text: c.text, paper: c.paper, ours, unit: unitOf(c.kind), ...judged, ...(note ? { note } : {}) };
    });
  const skippedClaims = experiment.claims.filter((c) => !c.uses.every((name) => presentNames.has(name))).map((c) => c.id);
  const unchecked = present.flatMap((s, i) => (jobIndex[i]!.some((j) => !measures[j]!.checkerOk) ? [s.name] : []));
  const wallMs = [...new Set(jobIndex.flat())].reduce((sum, j) => sum + measures[j]!.wallMs, 0);
  return {
    id: experiment.id,
    figure: experiment.figure,
    title: experiment.title,
    params: {
      ...experiment.params,
      scale,
      ...(missing.length > 0 ? { skipped: `${missing.join(', ')}: not in this build${skippedClaims.length > 0 ? `; claims left out: ${skippedClaims.join(', ')}` : ''}` } : {}),
      ...(unchecked.length > 0 ? { checkerFailed: unchecked.join(', ') } : {}),
    },
    x: experiment.x,
    y: { field: experiment.y.field, label: experiment.y.label, scale: experiment.y.scale },
    series,
    paperSeries: experiment.paperSeries ?? [],
    claims,
    wallMs,
  };
}
