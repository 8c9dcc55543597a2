import { z } from 'zod';

/**
 * What a saved report must hold for `lockfabric report` to draw it. Only the fields a page reads
 * are checked; others (a bench row's digest, NIC IOPS, …) pass through untouched.
 */
const finite = z.number().finite();
const count = z.number().int().nonnegative();

const verbs = z.object({ read: finite, write: finite, cas: finite, faa: finite, maskedCas: finite, maskedFaa: finite, total: finite }).passthrough();

const comparisonRow = z
  .object({
    protocol: z.string().min(1),
    substrate: z.string(),
    family: z.enum(['rdma', 'switch', 'redis']).optional(),
    throughput: finite.nonnegative(),
    latencyUs: z.object({ p50: finite, p99: finite }).passthrough(),
    latencyCdfUs: z.array(z.object({ fraction: finite.min(0).max(1), us: finite.nonnegative() })).optional(),
    verbsPerAcquire: verbs,
    acquires: count,
    failures: count,
    violations: count,
    livenessViolations: count,
    checked: z.boolean(),
    switchGrantShare: finite.min(0).max(1).optional(),
    verdict: z.enum(['ok', 'violation', 'liveness', 'unchecked']).optional(),
    transactions: z.object({ workload: z.string(), committedPerSec: finite.nonnegative() }).passthrough().optional(),
  })
  .passthrough();

export const benchReportSchema = z
  .object({ kind: z.literal('bench'), version: z.literal(1), title: z.string().optional(), command: z.string().optional(), results: z.array(comparisonRow).min(1) })
  .passthrough();

export const demoReportSchema = z
  .object({
    kind: z.literal('demo'),
    version: z.literal(1),
    substrate: z.string(),
    workload: z.record(z.union([z.string(), z.number(), z.boolean()])),
    transport: z.object({ grpcRttUs: finite, natsRttUs: finite }).passthrough().optional(),
    wallMs: finite.optional(),
    results: z.array(comparisonRow).min(1),
    transactions: z
      .object({
        workload: z.string(),
        clients: finite,
        operations: finite,
        results: z.array(
          z
            .object({ protocol: z.string(), committed: finite, committedPerSec: finite, p50Us: finite, p99Us: finite, aborts: finite, abortsByCode: z.record(finite), serializable: z.boolean(), verdict: z.string() })
            .passthrough(),
        ),
      })
      .passthrough()
      .optional(),
  })
  .passthrough();

const series = z.object({ name: z.string(), points: z.array(z.object({ x: finite, y: finite })) });
const axis = z.object({ field: z.string(), label: z.string(), scale: z.enum(['linear', 'log']) });
const claim = z.object({
  id: z.string(),
  text: z.string(),
  paper: finite,
  ours: finite,
  unit: z.string(),
  sameDirection: z.boolean(),
  deviation: finite,
  verdict: z.enum(['reproduced', 'same-direction', 'opposite']),
  note: z.string().optional(),
});
const experiment = z.object({
  id: z.string().min(1),
  figure: z.string(),
  title: z.string(),
  params: z.record(z.union([z.string(), z.number(), z.boolean()])),
  x: axis,
  y: axis,
  series: z.array(series),
  paperSeries: z.array(series),
  claims: z.array(claim),
  wallMs: finite,
});

export const reproduceResultSchema = z.object({
  kind: z.literal('reproduce'),
  version: z.literal(1),
  quick: z.boolean(),
  startedAt: z.string(),
  wallMs: finite,
  papers: z.array(z.object({ paper: z.enum(['fisslock', 'shiftlock', 'dslr', 'declock', 'alock']), title: z.string(), experiments: z.array(experiment) })),
});

const bucket = z.object({ startNs: finite, ok: count, failed: count, failedByCode: z.record(count), throughput: finite }).passthrough();
const fault = z.object({ id: z.string(), kind: z.string(), target: z.string(), startNs: finite, endNs: finite.optional() }).passthrough();

export const faultReportSchema = z
  .object({
    kind: z.literal('nemesis').optional(),
    title: z.string(),
    protocol: z.string(),
    substrate: z.string(),
    seed: finite,
    startNs: finite,
    endNs: finite,
    bucketMs: finite.positive(),
    buckets: z.array(bucket),
    faults: z.array(fault),
    verdict: z.object({ safety: z.enum(['ok', 'violation']), liveness: z.enum(['ok', 'violation', 'unchecked']), exitCode: count, lines: z.array(z.string()) }),
    unknownOps: count,
    failuresByCode: z.record(count),
    command: z.string().optional(),
  })
  .passthrough();

/** Zod's issues as one line each: `path: message`. */
export function issueLines(error: z.ZodError): string[] {
  return error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(top level)'}: ${i.message}`);
}
