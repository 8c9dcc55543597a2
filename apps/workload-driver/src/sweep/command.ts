// `lockfabric sweep run|merge|job`: a swarm sweep split into shards — local processes or the pods
// of a Kubernetes Indexed Job — and merged into the result `check --swarm` gives in one run.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { swarmExitCode } from '@lockfabric/harness';
import { availableProtocols, protocolById } from '@lockfabric/lock-catalog';
import { ConfigError, LockFabricError, errorMessage } from '@lockfabric/ports';
import { FlagReader, parseCommandArgs, readProtocolOptions } from '../cli/args.js';
import { flatten, summarize } from '../swarm/command.js';
import { runSwarmJobs } from '../swarm/jobs.js';
import { sweepJob } from './job-manifest.js';
import { mergeShards, planJobs, shardFileName, shardSlice } from './shards.js';
import type { ShardFile, SweepPlan } from './shards.js';

export const SWEEP_HELP = `lockfabric sweep — a check --swarm sweep split into shards, run anywhere, merged into one result

  lockfabric sweep run --shards K [--index I] --out DIR [--protocol ID,…|all] [--seeds N] [--first-seed S]
                       [--opt KEY=VALUE] [--workers N]
      runs shard I of K (default: $JOB_COMPLETION_INDEX, set by a Kubernetes Indexed Job) and
      writes DIR/shard-IIII-of-K.json
  lockfabric sweep merge DIR [--json]
      merges every shard file in DIR; refuses a missing, repeated or foreign shard. The summary
      (per-protocol digest, failures) and the exit status are those of check --swarm over the same seeds
  lockfabric sweep job --shards K --results-claim PVC [--image IMG] [--name NAME] [--namespace NS]
                       [--parallelism P] [--kube-context CTX [--dry-run]] [sweep flags as for run]
      prints the Indexed Job (JSON) that runs the K shards as pods writing to the claim; with
      --kube-context applies it there (kubectl apply; --dry-run prints the kubectl line instead)

Exit status (run, merge): as check --swarm — 0 pass, 1 safety, 3 liveness, 4 a run that threw; 2 bad input.`;

export async function sweepCommand(argv: readonly string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'run') return runShard(rest);
  if (sub === 'merge') return merge(rest);
  if (sub === 'job') return job(rest);
  if (sub === undefined || sub === '--help' || sub === '-h') return (console.log(SWEEP_HELP), sub === undefined ? 2 : 0);
  throw new ConfigError([`lockfabric sweep: unknown subcommand ${JSON.stringify(sub)} (run, merge or job)`]);
}

const PLAN_FLAGS = {
  protocol: { type: 'string' },
  seeds: { type: 'string' },
  'first-seed': { type: 'string' },
  shards: { type: 'string' },
  opt: { type: 'string', multiple: true },
  help: { type: 'boolean' },
} as const;

/** The plan the flags describe; problems go to `reader`. */
function readPlan(values: Record<string, unknown>, reader: FlagReader): SweepPlan {
  const shards = reader.number('shards', 0, { integer: true, min: 1, max: 10_000 });
  if (values['shards'] === undefined) reader.problems.push('--shards: required (how many shards the sweep is split into)');
  const seeds = reader.number('seeds', 100, { integer: true, min: 1 });
  const firstSeed = reader.number('first-seed', 1, { integer: true, min: 0 });
  const requested = reader.string('protocol', 'all');
  const options = readProtocolOptions(values, reader);
  const protocols: string[] = [];
  if (requested === 'all') protocols.push(...availableProtocols().map((p) => p.id));
  else
    for (const id of requested.split(',').map((s) => s.trim())) {
      try {
        protocols.push(protocolById(id).id);
      } catch (error) {
        reader.problems.push(...(error instanceof ConfigError ? error.issues : [`--protocol: ${errorMessage(error)}`]));
      }
    }
  if (protocols.length > 1 && Object.keys(options).length > 0) reader.problems.push('--opt: options belong to one protocol; give --protocol ID');
  return { protocols, seeds, firstSeed, shards, options };
}

async function runShard(argv: readonly string[]): Promise<number> {
  const values = parseCommandArgs('sweep run', argv, { ...PLAN_FLAGS, index: { type: 'string' }, out: { type: 'string' }, workers: { type: 'string' } });
  if (values['help']) return (console.log(SWEEP_HELP), 0);
  const reader = new FlagReader(values);
  const plan = readPlan(values, reader);
  const fromEnv = process.env['JOB_COMPLETION_INDEX'];
  if (values['index'] === undefined && fromEnv === undefined) reader.problems.push('--index: required outside a Kubernetes Indexed Job (no JOB_COMPLETION_INDEX)');
  const index = new FlagReader({ index: values['index'] ?? fromEnv }).number('index', 0, { integer: true, min: 0 });
  if (plan.shards > 0 && index >= plan.shards) reader.problems.push(`--index: shard ${index} does not exist in ${plan.shards} shards`);
  const workers = reader.number('workers', 1, { integer: true, min: 1, max: 64 });
  const out = typeof values['out'] === 'string' ? values['out'] : '';
  if (!out) reader.problems.push('--out: required (the directory the shard file goes to)');
  reader.done();
  const jobs = planJobs(plan);
  const { from, to } = shardSlice(jobs.length, plan.shards, index);
  const results = await runSwarmJobs(jobs.slice(from, to), workers);
  const file: ShardFile = { sweep: 'swarm', plan, index, from, to, results };
  mkdirSync(out, { recursive: true });
  // Written whole, then renamed: a merge never reads half a shard, and a retried pod replaces it.
  const path = join(out, shardFileName(index, plan.shards));
  writeFileSync(`${path}.partial`, JSON.stringify(file));
  renameSync(`${path}.partial`, path);
  console.log(`shard ${index} of ${plan.shards}: jobs ${from}…${to - 1} (${to - from} seeds), ${results.filter((r) => r.failure).length} failing → ${path}`);
  return swarmExitCode(results);
}

function merge(argv: readonly string[]): Promise<number> {
  const values = parseCommandArgs('sweep merge', argv, { json: { type: 'boolean' }, help: { type: 'boolean' } });
  if (values['help']) return Promise.resolve((console.log(SWEEP_HELP), 0));
  const [dir, ...extra] = (values['_'] as unknown as string[]) ?? [];
  if (!dir || extra.length > 0) throw new ConfigError(['lockfabric sweep merge: give exactly one DIR holding the shard files']);
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => /^shard-\d+-of-\d+\.json$/.test(n)).sort();
  } catch (error) {
    throw new ConfigError([`${dir}: ${errorMessage(error)}`]);
  }
  const files = names.map((name) => {
    try {
      return { name, file: JSON.parse(readFileSync(join(dir, name), 'utf8')) as ShardFile };
    } catch (error) {
      throw new ConfigError([`${name}: not a shard file (${errorMessage(error)})`]);
    }
  });
  const { plan, results } = mergeShards(files);
  const protocols = plan.protocols.map((id) => summarize(id, results.filter((r) => r.protocol === id)));
  const failures = results.filter((r) => r.failure).map(flatten);
  if (values['json'] === true) console.log(JSON.stringify({ swarm: true, seeds: plan.seeds, firstSeed: plan.firstSeed, shards: plan.shards, protocols, failures }));
  else {
    for (const f of failures) console.log(`${String(f['mix'])}\n  ${String(f['kind'])} failure\n  reproduce: ${String(f['reproduce'])}`);
    for (const p of protocols) console.log(`${p.protocol}: ${p.seeds} seeds (${plan.firstSeed}…${plan.firstSeed + plan.seeds - 1}), ${p.failing === 0 ? 'all passed' : `${p.failing} failing`}, digest ${p.digest}`);
    console.log(`sweep: ${results.length} seeds merged from ${plan.shards} shard(s)`);
  }
  return Promise.resolve(swarmExitCode(results));
}

function job(argv: readonly string[]): Promise<number> {
  const values = parseCommandArgs('sweep job', argv, {
    ...PLAN_FLAGS,
    image: { type: 'string' },
    name: { type: 'string' },
    namespace: { type: 'string' },
    'results-claim': { type: 'string' },
    parallelism: { type: 'string' },
    'kube-context': { type: 'string' },
    'dry-run': { type: 'boolean' },
  });
  if (values['help']) return Promise.resolve((console.log(SWEEP_HELP), 0));
  const reader = new FlagReader(values);
  const plan = readPlan(values, reader);
  const name = reader.string('name', 'lockfabric-sweep');
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name) || name.length > 52) reader.problems.push(`--name: expected a DNS label of at most 52 characters, got ${JSON.stringify(name)}`);
  const resultsClaim = reader.string('results-claim', '');
  if (!resultsClaim) reader.problems.push('--results-claim: required (a ReadWriteMany PersistentVolumeClaim the pods write their shard files to)');
  const parallelism = reader.number('parallelism', plan.shards, { integer: true, min: 1 });
  const namespace = typeof values['namespace'] === 'string' ? values['namespace'] : undefined;
  const context = typeof values['kube-context'] === 'string' ? values['kube-context'] : undefined;
  if (values['dry-run'] === true && context === undefined) reader.problems.push('--dry-run: shows the kubectl apply, so it needs --kube-context');
  reader.done();
  const manifest = JSON.stringify(sweepJob({ plan, name, image: reader.string('image', 'lockfabric'), resultsClaim, parallelism, ...(namespace ? { namespace } : {}) }), null, 2);
  if (context === undefined) return Promise.resolve((console.log(manifest), 0));
  const kubectl = ['--context', context, ...(namespace ? ['-n', namespace] : []), 'apply', '-f', '-'];
  if (values['dry-run'] === true) return Promise.resolve((console.log(`kubectl ${kubectl.join(' ')} <<'EOF'\n${manifest}\nEOF`), 0));
  const applied = spawnSync('kubectl', kubectl, { input: manifest, stdio: ['pipe', 'inherit', 'inherit'] });
  if (applied.error) throw new SweepError(`kubectl: ${applied.error.message}`);
  if (applied.status !== 0) throw new SweepError(`kubectl apply on context ${context} failed (exit ${String(applied.status)}); the manifest is what \`lockfabric sweep job\` prints without --kube-context`);
  console.log(`sweep Job ${name} applied on ${context}: ${plan.shards} shards; when it completes, run lockfabric sweep merge /results on the claim ${resultsClaim}`);
  return Promise.resolve(0);
}

export class SweepError extends LockFabricError {
  readonly code = 'SWEEP';
}
