import { DEFAULT_PROTOCOL_ID, protocolById } from '@lockfabric/lock-catalog';
import { ConfigError } from '@lockfabric/ports';
import { WORKLOAD_FLAGS, parseCommandArgs, readWorkload, workloadFlags } from '../cli/args.js';
import { COST_MODEL_FLAGS, COST_MODEL_HELP, readCostModel } from '../cli/cost-model.js';
import { runJobs } from '../workers/pool.js';
import { checkSeed } from './check-seed.js';
import type { CheckSeedJob } from './check-seed.js';
import { ProgressBar } from '../report/progress.js';
import { output } from './context.js';
import { SWARM_HELP, swarmCommand } from '../swarm/command.js';

export const CHECK_HELP = `lockfabric check — simulation testing over a range of seeds

  --protocol, -p ID        protocol id (default caslock)
  --seeds N                number of seeds (default 100)     --first-seed S  first seed (default 1)
  --crash-probability P    a client crashes instead of releasing, per release (default 0)
  --jitter-ns NS           extra random delay per verb batch and message (default 200)
${COST_MODEL_HELP}
  workload flags as for bench (defaults: 8 clients, 4 locks, read ratio 0.5, 300 operations,
  500 ns critical section, 20 ms acquire timeout); --opt KEY=VALUE for protocol options;
  --racks R (fisslock) partitions the lock ids over R switches
  --workers N              run seeds on N threads (this one and N-1 workers); same output for any N
  --json                   print one JSON object

Exit status: 0 all seeds pass, 1 an exclusion violation, 3 a liveness failure only.
Each failing seed prints a one-line command that reproduces it.

${SWARM_HELP}`;

interface SeedFailure {
  readonly seed: number;
  readonly kind: 'exclusion' | 'liveness' | 'crash';
  readonly detail: string;
  readonly reproduce: string;
}

export async function checkCommand(argv: readonly string[]): Promise<number> {
  const values = parseCommandArgs('check', argv, {
    ...WORKLOAD_FLAGS,
    seeds: { type: 'string' },
    'first-seed': { type: 'string' },
    'crash-probability': { type: 'string' },
    'jitter-ns': { type: 'string' },
    swarm: { type: 'boolean' },
    workers: { type: 'string' },
    'print-mix': { type: 'boolean' },
    'force-faults': { type: 'string' },
    ...COST_MODEL_FLAGS,
  });
  if (values['help']) return (console.log(CHECK_HELP), 0);
  if (values['swarm'] === true && values['cost-model'] !== undefined) throw new ConfigError(['--cost-model: --swarm runs on the ideal model only for now; drop one of them']);
  if (values['swarm'] === true) return swarmCommand(values);
  if (values['print-mix'] !== undefined) throw new ConfigError(['--print-mix goes with --swarm']);
  if (values['force-faults'] !== undefined) throw new ConfigError(['--force-faults goes with --swarm']);
  const { spec, protocolOptions, reader } = readWorkload(values, {
    clients: 8,
    locks: 4,
    readRatio: 0.5,
    distribution: 'uniform',
    operations: 300,
    criticalSectionNs: 500,
    thinkNs: 200,
    timeoutMs: 20,
  });
  const seeds = reader.number('seeds', 100, { integer: true, min: 1 });
  const firstSeed = reader.number('first-seed', 1, { integer: true, min: 0 });
  const crashProbability = reader.number('crash-probability', 0, { min: 0, max: 1 });
  const jitterNs = reader.number('jitter-ns', 200, { min: 0 });
  const workers = reader.number('workers', 1, { integer: true, min: 1, max: 64 });
  const protocol = reader.string('protocol', DEFAULT_PROTOCOL_ID);
  const costModel = readCostModel(values, reader);
  // the catalog's error lists the ids (redlock, for one, runs only in the SmallBank bench)
  try {
    if (protocol.includes(',')) throw new ConfigError([`--protocol: check runs one protocol at a time; give one id, or check --swarm --protocol ${protocol} for a list`]);
    protocolById(protocol);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    reader.problems.push(...error.issues);
  }
  reader.done();
  const out = output(values['json'] === true);
  const bar = new ProgressBar(`check ${protocol}`, { enabled: !out.json });
  const failures: SeedFailure[] = [];
  let violations = 0;
  const started = performance.now();
  const jobs: CheckSeedJob[] = Array.from({ length: seeds }, (_, i) => ({ protocol, protocolOptions, spec: { ...spec, seed: firstSeed + i }, jitterNs, crashProbability, costModel }));
  // Outcomes arrive in seed order whatever the worker count, so the output is the same for any N.
  await runJobs(jobs, workers, 'check', checkSeed, (i, outcome) => {
    const seed = outcome.seed;
    const reproduce = ['lockfabric bench --substrate sim', ...workloadFlags(protocol, jobs[i]!.spec, protocolOptions), `--jitter-ns ${jitterNs}`, `--cost-model ${typeof values['cost-model'] === 'string' ? values['cost-model'] : costModel.name}`, ...(crashProbability > 0 ? [`--crash-probability ${crashProbability}`] : []), '--history history.jsonl'].join(' ');
    violations += outcome.violations;
    if (outcome.kind) {
      const failure: SeedFailure = { seed, kind: outcome.kind, detail: outcome.detail ?? '', reproduce };
      failures.push(failure);
      if (!out.json) {
        bar.done();
        console.log(`seed ${seed}: ${failure.kind} failure\n  ${failure.detail.split('\n').join('\n  ')}\n  reproduce: ${reproduce}`);
      }
    }
    bar.update((i + 1) / seeds, `${i + 1}/${seeds} seeds, ${failures.length} failing`);
  });
  bar.done();
  const wallMs = performance.now() - started;
  if (out.json) console.log(JSON.stringify({ protocol, seeds, firstSeed, costModel: costModel.name, workers, violations, failures, wallMs }));
  else console.log(`${protocol}: ${seeds} seeds (${firstSeed}…${firstSeed + seeds - 1}, cost model ${costModel.name}) in ${(wallMs / 1000).toFixed(1)} s: ${failures.length === 0 ? 'all passed' : `${failures.length} failing, ${violations} exclusion violations`}`);
  if (failures.some((f) => f.kind === 'exclusion')) return 1;
  if (failures.some((f) => f.kind === 'crash')) return 4;
  return failures.length > 0 ? 3 : 0;
}
