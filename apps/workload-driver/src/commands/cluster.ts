import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { FISSLOCK_POLICIES, SWITCH_PROGRAMS } from '@lockfabric/config';
import { DEFAULT_SWITCH_PROGRAM, switchProgramKind } from '@lockfabric/lock-catalog';
import { MAX_RACKS } from '@lockfabric/ports';
import { FlagReader, parseCommandArgs } from '../cli/args.js';
import { isAlive, readClusterState, startLocalCluster, stopLocalCluster } from '../cluster/local-cluster.js';
import { renderTable } from '../report/table.js';
import { DEFAULT_CLUSTER_DIR, INTERACTIVE_CLUSTER_ENV, output } from './context.js';

export const CLUSTER_HELP = `lockfabric cluster up|down|status — a local live cluster as separate processes

  up       starts nats-server (unless --nats-url or NATS_URL), redis-server (SmallBank's
           balances), memory node(s), compute nodes,
           switch-dataplane and coordinator (and, with --cut-proxy, the cut proxy); writes pids,
           ports and log paths to DIR/cluster.json
  down     SIGTERM every process (SIGKILL after 10 s) and removes the state file
  status   each process: pid, alive, ready (/readyz), ports, log

  --dir DIR             state and logs (default ${DEFAULT_CLUSTER_DIR})
  --compute-nodes N     (default 2)        --memory-nodes N   (default 1)
  --lock-count N        lock-table entries per memory node (default 1048576, 16 bytes each)
  --mn-iops N           each memory node's NIC serves at most N verbs per second (default: no cap);
                        bench --substrate live then reports nicUtilisation
  --switch-program P    the switch-dataplane's program: forward (default), fisslock or netlock.
                        bench --substrate live needs the one its protocol uses (it says which)
  --switch-policy P     fisslock: read-preferring (default), starvation-prevention or
                        write-preferring; runs must use the same --opt policy=
  --switch-lock-count N fisslock: locks decided on the switch (default its capacity, 1680000);
                        runs with more locks need --opt switchCapacity=N
  --racks R             fisslock: R racks, one switch-dataplane each, the lock ids partitioned
                        over them (FissLock §5.4); compute node i in rack i % R (default 1)
  --nats-url URL        use this NATS      --json             print one JSON object
  --cut-proxy           relay every service's NATS connection and data-plane gRPC ports through
                        a cut proxy, so \`lockfabric chaos partition\` cuts a node off for real
                        (costs throughput: leave it off for benchmarks; without it partition
                        falls back to SIGSTOP). NATS stays plaintext (auth on): the proxy
                        reads its frames
  --insecure            no TLS: plaintext gRPC and NATS, any local process may call or publish
                        anything (logged loudly). Default: a CA for this cluster in DIR/tls, a
                        certificate per process (and for nats-server, TLS only), and the CLI
                        acting as the cluster's operator
  --cpu-prof DIR        every Node.js service writes a V8 CPU profile into DIR when it stops
                        (\`cluster down\`); open it in Chrome DevTools or VS Code`;

export async function clusterCommand(argv: readonly string[]): Promise<number> {
  const values = parseCommandArgs('cluster', argv, {
    dir: { type: 'string' },
    'compute-nodes': { type: 'string' },
    'memory-nodes': { type: 'string' },
    'lock-count': { type: 'string' },
    'mn-iops': { type: 'string' },
    'switch-program': { type: 'string' },
    'switch-policy': { type: 'string' },
    'switch-lock-count': { type: 'string' },
    racks: { type: 'string' },
    'nats-url': { type: 'string' },
    'cut-proxy': { type: 'boolean' },
    insecure: { type: 'boolean' },
    'cpu-prof': { type: 'string' },
    json: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  const action = (values['_'] as string[])[0];
  if (values['help'] || !action) return (console.log(CLUSTER_HELP), values['help'] ? 0 : 2);
  const reader = new FlagReader(values);
  const dir = reader.string('dir', DEFAULT_CLUSTER_DIR);
  const computeNodes = reader.number('compute-nodes', 2, { integer: true, min: 1 });
  const memoryNodes = reader.number('memory-nodes', 1, { integer: true, min: 1 });
  const lockCount = reader.number('lock-count', 1_048_576, { integer: true, min: 1 });
  const memoryIopsCap = reader.optionalNumber('mn-iops', { min: 1 });
  const switchProgram = reader.string('switch-program', DEFAULT_SWITCH_PROGRAM);
  const switchPolicy = typeof values['switch-policy'] === 'string' ? values['switch-policy'] : undefined;
  const switchLockCount = reader.optionalNumber('switch-lock-count', { integer: true, min: 1 });
  if (!SWITCH_PROGRAMS.includes(switchProgram as (typeof SWITCH_PROGRAMS)[number])) reader.problems.push(`--switch-program: expected one of ${SWITCH_PROGRAMS.join(', ')}, got ${JSON.stringify(switchProgram)}`);
  if (switchPolicy !== undefined && !FISSLOCK_POLICIES.includes(switchPolicy as (typeof FISSLOCK_POLICIES)[number])) reader.problems.push(`--switch-policy: expected one of ${FISSLOCK_POLICIES.join(', ')}, got ${JSON.stringify(switchPolicy)}`);
  if ((switchPolicy !== undefined || switchLockCount !== undefined) && !switchProgramKind(switchProgram)?.takesDeciderSettings) reader.problems.push('--switch-policy and --switch-lock-count apply to --switch-program fisslock only');
  const racks = reader.number('racks', 1, { integer: true, min: 1, max: MAX_RACKS });
  if (racks > 1 && !switchProgramKind(switchProgram)?.multiRack) reader.problems.push('--racks: only --switch-program fisslock partitions lock ids over several switches');
  reader.done();
  const switchSettings = { ...(switchPolicy === undefined ? {} : { policy: switchPolicy }), ...(switchLockCount === undefined ? {} : { lockCount: switchLockCount }) };
  const out = output(values['json'] === true);
  const natsUrl = typeof values['nats-url'] === 'string' ? values['nats-url'] : process.env['NATS_URL'];
  switch (action) {
    case 'up': {
      const state = await startLocalCluster({ dir, computeNodes, memoryNodes, ...(racks > 1 ? { racks } : {}), lockCount, ...(memoryIopsCap ? { memoryIopsCap } : {}), switchProgram, switchSettings, env: INTERACTIVE_CLUSTER_ENV, withCutProxy: values['cut-proxy'] === true, insecure: values['insecure'] === true, ...(typeof values['cpu-prof'] === 'string' ? { cpuProfileDir: resolve(values['cpu-prof']) } : {}), withRedis: true, ...(natsUrl ? { natsUrl } : {}), onStatus: (line) => out.note(line) });
      if (out.json) console.log(JSON.stringify(state));
      else console.log(`cluster "${state.cluster}" is up: ${state.processes.length} processes, NATS ${state.natsUrl}, gRPC ${state.tls === 'mtls' ? `mutual TLS (CA and certificates in ${dir}/tls)` : 'INSECURE'}, NATS ${existsSync(join(dir, 'nats', 'nats-server.conf')) ? `NKey auth per service${existsSync(join(dir, 'nats', 'ca.crt')) ? ' over TLS' : ''} (seeds in ${dir}/nats)` : 'WITHOUT AUTH'}; state in ${dir}/cluster.json`);
      return 0;
    }
    case 'down': {
      const state = await stopLocalCluster(dir);
      if (out.json) console.log(JSON.stringify({ stopped: state?.processes.length ?? 0 }));
      else console.log(state ? `stopped ${state.processes.length} processes` : `no cluster state in ${dir}`);
      return 0;
    }
    case 'status': {
      const state = readClusterState(dir);
      if (!state) {
        if (out.json) console.log(JSON.stringify({ running: false }));
        else console.log(`no cluster in ${dir} (start one with \`lockfabric cluster up\`)`);
        return 1;
      }
      const rows = await Promise.all(
        state.processes.map(async (p) => {
          const alive = isAlive(p.pid);
          let ready = 'n/a';
          if (alive && p.health) {
            ready = await fetch(`http://127.0.0.1:${p.health}/readyz`, { signal: AbortSignal.timeout(2_000) })
              .then((r) => (r.ok ? 'yes' : `no (${r.status})`))
              .catch(() => 'no answer');
          }
          return { ...p, alive, ready, ...(alive ? residentMb(p.pid) : {}) };
        }),
      );
      if (out.json) console.log(JSON.stringify({ running: true, cluster: state.cluster, natsUrl: state.natsUrl, processes: rows }));
      else console.log(renderTable(['process', 'pid', 'alive', 'ready', 'RSS MB', 'grpc', 'health', 'log'], rows.map((r) => [r.name, r.pid, r.alive ? 'yes' : 'NO', r.ready, 'rssMb' in r ? r.rssMb.toFixed(1) : '-', r.grpc ? String(r.grpc) : '-', r.health ? String(r.health) : '-', r.log])));
      return rows.every((r) => r.alive) ? 0 : 1;
    }
    default:
      console.error(`lockfabric cluster: unknown action ${JSON.stringify(action)} (up, down or status)`);
      return 2;
  }
}

/** Resident memory of a process (Linux /proc; nothing elsewhere): a memory node's lock table shows here. */
function residentMb(pid: number): { rssMb: number } | Record<string, never> {
  try {
    const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
    return Number.isFinite(kb) ? { rssMb: kb / 1024 } : {};
  } catch {
    return {};
  }
}
