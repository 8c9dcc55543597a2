// `lockfabric check --swarm`: one seed derives a workload and a fault mix; safety, then liveness after healing.
import { createHash } from 'node:crypto';
import { FORCIBLE_FAULTS, buildSwitchProgram, swarmExitCode, swarmMix, withForcedFaults } from '@lockfabric/harness';
import type { ForcibleFault, SwarmSeedResult } from '@lockfabric/harness';
import { availableProtocols, protocolById } from '@lockfabric/lock-catalog';
import type { ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import { ConfigError, errorMessage } from '@lockfabric/ports';
import { createSimCluster } from '@lockfabric/sim';
import { FlagReader, readProtocolOptions } from '../cli/args.js';
import { output } from '../commands/context.js';
import { ProgressBar } from '../report/progress.js';
import { runSwarmJobs } from './jobs.js';
import type { SwarmJob } from './jobs.js';

// Workload and fault flags do not apply: the swarm draws each seed's workload and faults itself.
const NOT_FOR_SWARM = ['clients', 'locks', 'read-ratio', 'distribution', 'lock-ids', 'duration-ms', 'operations', 'think-ns', 'cs-ns', 'seed', 'timeout-ms', 'crash-probability', 'jitter-ns'];

export const SWARM_HELP = `lockfabric check --swarm [--protocol ID,…|all] [--seeds N] [--first-seed S] [--workers N] [--json]
  each seed draws its own workload and fault mix (client crashes, a compute-node kill, process
  pauses, memory-node restarts, partitions, lost verb completions, switch loss/duplication/reordering/delay,
  schedule jitter) from the faults the protocol
  declares it survives, prints it, checks exclusion over the faulty history, then heals and
  requires every lock to be acquirable again within the protocol's budget.
  --protocol ID,…|all      one protocol or a comma-separated list, or every protocol in turn (default all)
  --seeds N                seeds per protocol (default 100)   --first-seed S  (default 1)
  --workers N              run seeds on N threads (this one and N-1 workers); same result for any N
  --print-mix              print every seed's mix, not only the failing ones
  --force-faults LIST      turn faults on whatever the protocol's profile says (sweeping a fault before
                           a profile claims it): ${Object.keys(FORCIBLE_FAULTS).join(', ')}
  --opt KEY=VALUE          protocol option, wins over the drawn ones (one protocol only)
  --racks R                fisslock: lock ids over R switches (same as --opt racks=R)

Exit status: 0 all seeds pass, 1 a safety (exclusion) failure, 3 a liveness failure only,
4 a run that threw. Each failing seed prints its mix and a one-line reproduction.`;

/** Every flag problem is collected before anything runs. */
export async function swarmCommand(values: Record<string, unknown>): Promise<number> {
  const reader = new FlagReader(values);
  for (const flag of NOT_FOR_SWARM) if (values[flag] !== undefined) reader.problems.push(`--${flag}: not used with --swarm (each seed draws its own workload and faults)`);
  const seeds = reader.number('seeds', 100, { integer: true, min: 1 });
  const firstSeed = reader.number('first-seed', 1, { integer: true, min: 0 });
  const workers = reader.number('workers', 1, { integer: true, min: 1, max: 64 });
  const requested = reader.string('protocol', 'all');
  const options = readProtocolOptions(values, reader);
  const force = readForcedFaults(values['force-faults'], reader);
  const protocols = requested === 'all' ? availableProtocols() : [...new Set(requested.split(',').map((id) => id.trim()).filter((id) => id.length > 0))].flatMap((id) => knownProtocol(id, reader));
  if (protocols.length === 0 && reader.problems.length === 0) reader.problems.push('--protocol: expected all, a protocol id or a comma-separated list');
  if (protocols.length !== 1 && Object.keys(options).length > 0) reader.problems.push('--opt: options belong to one protocol; give --protocol ID');
  for (const protocol of protocols) reader.problems.push(...optionProblems(protocol, options));
  reader.done();
  const out = output(values['json'] === true);
  const printMix = values['print-mix'] === true;
  const ids = protocols.map((p) => p.id);
  const jobs: SwarmJob[] = ids.flatMap((protocol) => Array.from({ length: seeds }, (_, i) => ({ protocol, seed: firstSeed + i, options, ...(force.length > 0 ? { force } : {}) })));
  if (!out.json && seeds === 1) for (const p of protocols) console.log(swarmMix(withForcedFaults(p, force), firstSeed, options).description);
  const bar = new ProgressBar(`swarm ${requested}`, { enabled: !out.json });
  let failing = 0;
  const started = performance.now();
  const results = await runSwarmJobs(jobs, workers, (done, result) => {
    if (result.failure) failing++;
    bar.update(done / jobs.length, `${done}/${jobs.length} seeds, ${failing} failing`);
  });
  bar.done();
  const wallMs = performance.now() - started;
  const perProtocol = ids.map((id) => summarize(id, results.filter((r) => r.protocol === id)));
  if (out.json) {
    console.log(JSON.stringify({ swarm: true, seeds, firstSeed, workers, wallMs, protocols: perProtocol, failures: results.filter((r) => r.failure).map(flatten) }));
  } else {
    for (const r of results) {
      if (r.failure) console.log(`${r.description}\n  ${r.failure.kind} failure\n  ${r.failure.detail.split('\n').join('\n  ')}\n  reproduce: ${r.failure.reproduce}`);
      else if (printMix && seeds > 1) console.log(r.description);
    }
    for (const p of perProtocol) console.log(`${p.protocol}: ${p.seeds} seeds (${firstSeed}…${firstSeed + seeds - 1}), ${p.failing === 0 ? 'all passed' : `${p.failing} failing (${Object.entries(p.byKind).map(([k, n]) => `${k} ${n}`).join(', ')})`}, digest ${p.digest}`);
    console.log(`swarm: ${jobs.length} seeds on ${workers} worker(s) in ${(wallMs / 1000).toFixed(1)} s (${(jobs.length / (wallMs / 1000)).toFixed(1)} seeds/s)`);
  }
  return swarmExitCode(results);
}

/** `--force-faults a,b`: every name is checked; an unknown one is a configuration problem. */
function readForcedFaults(value: unknown, reader: FlagReader): ForcibleFault[] {
  if (value === undefined) return [];
  const names = String(value).split(',').map((n) => n.trim()).filter((n) => n.length > 0);
  const known = (n: string): n is ForcibleFault => Object.hasOwn(FORCIBLE_FAULTS, n);
  for (const n of names) if (!known(n)) reader.problems.push(`--force-faults: unknown fault "${n}" (one of ${Object.keys(FORCIBLE_FAULTS).join(', ')})`);
  if (names.length === 0) reader.problems.push('--force-faults: give at least one fault');
  return [...new Set(names.filter(known))];
}

function knownProtocol(id: string, reader: FlagReader): ProtocolDefinition[] {
  try {
    return [protocolById(id)];
  } catch (error) {
    if (error instanceof ConfigError) reader.problems.push(...error.issues);
    else reader.problems.push(`--protocol: ${errorMessage(error)}`);
    return [];
  }
}

/** Protocol options are checked once, up front, by building one client on a throwaway cluster. */
function optionProblems(protocol: ProtocolDefinition, options: ProtocolOptions): string[] {
  if (Object.keys(options).length === 0) return [];
  const spec = swarmMix(protocol, 1).spec;
  const switchProgram = protocol.switchProgram ? { switchProgram: buildSwitchProgram(protocol.switchProgram, spec, options, protocol.buildSwitchProgram?.bind(protocol)) } : {};
  const { cluster } = createSimCluster({ seed: 1, lockCount: spec.locks, entryBytes: protocol.entryBytes, computeNodes: 1, memoryNodes: 1, ...switchProgram });
  try {
    protocol.createClient(cluster.clientPorts({ node: cluster.computeNodeIds[0]!, client: 0 }), options);
    return [];
  } catch (error) {
    return error instanceof ConfigError ? [...error.issues] : [];
  }
}

/** One protocol's sweep: counts, and one digest over its seeds' history digests (the same run gives the same digest). */
export function summarize(protocol: string, results: readonly SwarmSeedResult[]) {
  const byKind: Record<string, number> = {};
  for (const r of results) if (r.failure) byKind[r.failure.kind] = (byKind[r.failure.kind] ?? 0) + 1;
  const digest = createHash('sha256').update(results.map((r) => r.digest).join('\n')).digest('hex').slice(0, 16);
  const simEvents = results.reduce((sum, r) => sum + r.simEvents, 0);
  return { protocol, seeds: results.length, failing: results.filter((r) => r.failure).length, byKind, digest, simEvents };
}

export function flatten(r: SwarmSeedResult): Record<string, unknown> {
  return { protocol: r.protocol, seed: r.seed, mix: r.description, kind: r.failure?.kind, detail: r.failure?.detail, reproduce: r.failure?.reproduce };
}
