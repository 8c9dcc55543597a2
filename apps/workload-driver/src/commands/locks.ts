import { create } from '@bufbuild/protobuf';
import { UnaryClient, assertTransportSecurityMatches } from '@lockfabric/live';
import { ConfigError } from '@lockfabric/ports';
import { tableResetProtocolIds } from '@lockfabric/lock-catalog';
import { DrainLockRequestSchema, LockAdminService, ResetTableRequestSchema } from '@lockfabric/wire';
import type { LockTableTarget } from '@lockfabric/wire';
import { FlagReader, parseCommandArgs } from '../cli/args.js';
import { readClusterState } from '../cluster/local-cluster.js';
import { addressOf } from '../run/remote-cluster.js';
import { DEFAULT_CLUSTER_DIR } from './context.js';

export const LOCKS_HELP = `lockfabric locks reset|drain — planned DSLR maintenance, carried out by the coordinator

  reset     between runs, with every client stopped: check that no ticket is outstanding
            (conservation), zero every lock word of the table, and verify
  drain     during a run: freeze one lock to new tickets, let its holders and queued waiters
            finish, reset its counters and reopen it (new acquires wait, or time out, meanwhile)

  --protocol P           dslr (default) or dslr-backoff
  --locks N              locks in the table (default 1024)
  --lock L               drain: the lock to drain
  --opt key=value        the protocol options the clients run with (e.g. leaseNs=200000000); repeatable
  --timeout-ms MS        drain: give up after MS (default 10000)
  --dir DIR              local cluster whose coordinator and memory nodes to use (default ${DEFAULT_CLUSTER_DIR})
  --coordinator-at H:P   a coordinator's gRPC address instead of the local cluster's
  --memory-nodes-at A,B  memory nodes' gRPC addresses in striping order instead of the local cluster's
  --json                 print the coordinator's answer as JSON`;

export async function locksCommand(argv: readonly string[]): Promise<number> {
  const values = parseCommandArgs('locks', argv, {
    protocol: { type: 'string' },
    locks: { type: 'string' },
    lock: { type: 'string' },
    opt: { type: 'string', multiple: true },
    'timeout-ms': { type: 'string' },
    dir: { type: 'string' },
    'coordinator-at': { type: 'string' },
    'memory-nodes-at': { type: 'string' },
    json: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  const action = (values['_'] as string[])[0];
  if (values['help'] || !action) return (console.log(LOCKS_HELP), values['help'] ? 0 : 2);
  if (action !== 'reset' && action !== 'drain') {
    console.error(`lockfabric locks: unknown action ${JSON.stringify(action)} (reset or drain)`);
    return 2;
  }
  const reader = new FlagReader(values);
  const protocol = reader.string('protocol', tableResetProtocolIds()[0]);
  const lockCount = reader.number('locks', 1024, { integer: true, min: 1 });
  const lock = reader.optionalNumber('lock', { integer: true, min: 0 });
  const timeoutMs = reader.number('timeout-ms', 10_000, { integer: true, min: 1 });
  const dir = reader.string('dir', DEFAULT_CLUSTER_DIR);
  const problems = [...reader.problems];
  if (action === 'drain' && lock === undefined) problems.push('lockfabric locks drain: --lock L is required');
  const options = parseOptions(values['opt'], problems);
  const { coordinator, memoryNodes } = endpoints(values, dir, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  const table: LockTableTarget = { $typeName: 'lockfabric.v1.LockTableTarget', protocol, memoryNodes, lockCount, options };
  await assertTransportSecurityMatches([coordinator]);
  const client = new UnaryClient(coordinator, timeoutMs + 30_000);
  try {
    if (action === 'reset') {
      const r = await client.call(LockAdminService.method.resetTable, create(ResetTableRequestSchema, { table }));
      if (values['json']) console.log(JSON.stringify({ locks: r.locks, nonZeroBefore: r.nonZeroBefore, conservationViolations: r.conservationViolations.map((v) => ({ lock: v.lock, counters: v.counters })), notZeroAfter: r.notZeroAfter, tookMs: Number(r.tookNs) / 1e6 }));
      else {
        console.log(`reset ${r.locks} ${protocol} locks in ${(Number(r.tookNs) / 1e6).toFixed(1)} ms: ${r.nonZeroBefore} were in use, ${r.conservationViolations.length} had tickets outstanding, ${r.notZeroAfter.length} not zero after`);
        for (const v of r.conservationViolations.slice(0, 20)) console.log(`  lock ${v.lock}: ${v.counters}`);
      }
      return r.notZeroAfter.length === 0 ? 0 : 1;
    }
    const r = await client.call(LockAdminService.method.drainLock, create(DrainLockRequestSchema, { table, lock: lock ?? 0, timeoutMs }));
    if (values['json']) console.log(JSON.stringify({ lock, outcome: r.outcome, before: r.before, verbs: r.verbs, tookMs: Number(r.tookNs) / 1e6 }));
    else console.log(`lock ${lock}: ${r.outcome} in ${(Number(r.tookNs) / 1e6).toFixed(1)} ms (${r.verbs} verbs; counters before: ${r.before})`);
    return 0;
  } finally {
    client.close();
  }
}

function parseOptions(raw: unknown, problems: string[]): Record<string, string> {
  const options: Record<string, string> = {};
  for (const item of Array.isArray(raw) ? (raw as string[]) : []) {
    const at = item.indexOf('=');
    if (at <= 0) problems.push(`--opt ${JSON.stringify(item)}: expected key=value`);
    else options[item.slice(0, at)] = item.slice(at + 1);
  }
  return options;
}

function endpoints(values: Record<string, unknown>, dir: string, problems: string[]): { coordinator: string; memoryNodes: string[] } {
  const coordinatorAt = typeof values['coordinator-at'] === 'string' ? values['coordinator-at'] : undefined;
  const memoryAt = typeof values['memory-nodes-at'] === 'string' ? values['memory-nodes-at'].split(',').filter((a) => a !== '') : undefined;
  if (coordinatorAt && memoryAt) return { coordinator: coordinatorAt, memoryNodes: memoryAt };
  const state = readClusterState(dir);
  const coordinator = state?.processes.find((p) => p.role === 'coordinator' && p.grpc !== undefined);
  const memories = state?.processes.filter((p) => p.role === 'memory') ?? [];
  if (!coordinatorAt && !coordinator) problems.push(`no coordinator: give --coordinator-at or start a local cluster in ${dir} (lockfabric cluster up)`);
  if (!memoryAt && memories.length === 0) problems.push(`no memory nodes: give --memory-nodes-at or start a local cluster in ${dir}`);
  return {
    coordinator: coordinatorAt ?? (coordinator ? addressOf(coordinator, coordinator.grpc) : ''),
    memoryNodes: memoryAt ?? memories.map((m) => addressOf(m, m.grpc)),
  };
}
