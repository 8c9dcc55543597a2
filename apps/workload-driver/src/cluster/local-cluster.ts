import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { startClusterRedis } from './redis-process.js';
import { locateNatsServer, startNatsServer } from '@lockfabric/nats-server';
import { isAlive, sleep, spawnLogged, waitForHealth } from './process-control.js';
import { driverEntry, serviceEntry } from './paths.js';
import type { ServiceApp } from './paths.js';
import { prepareLocalTls, useClusterTls } from './cluster-tls.js';
import { issueNatsServerCertificate } from './certificates.js';
import type { TlsFiles } from '@lockfabric/live';
import { errorMessage, rackOfComputeIndex } from '@lockfabric/ports';
import { DEFAULT_SWITCH_PROGRAM } from '@lockfabric/lock-catalog';
import { natsDir, prepareLocalNatsAuth, useClusterNats } from './cluster-nats.js';
import { ClusterStateError, MissingToolError } from './errors.js';
import { startParentWatch } from './parent-watch.js';
import type { ParentWatch } from './parent-watch.js';

export { isAlive, isRunning, tail } from './process-control.js';

export interface LocalClusterOptions {
  /** Holds cluster.json (pids, ports) and one log file per process. */
  readonly dir: string;
  readonly cluster?: string;
  readonly memoryNodes?: number;
  readonly computeNodes?: number;
  /** Racks, one switch-dataplane each, the FissLock lock ids partitioned over them (§5.4); compute node i in rack i % R. Default 1. */
  readonly racks?: number;
  readonly clientsPerComputeNode?: number;
  /** Bytes of lock table per memory node = lockCount × entryBytes. */
  readonly lockCount?: number;
  readonly entryBytes?: number;
  /** Verbs per second each memory node's NIC serves at most (`memory.iopsCap`); none by default. */
  readonly memoryIopsCap?: number;
  readonly withSwitch?: boolean;
  /** The switch-dataplane's program (forward, fisslock, netlock); default forward. */
  readonly switchProgram?: string;
  /** The fisslock decider's settings (switch-dataplane README "Program settings"); unset = its defaults. */
  readonly switchSettings?: SwitchSettings;
  readonly withCoordinator?: boolean;
  /** Use this NATS instead of starting nats-server. */
  readonly natsUrl?: string;
  /** Start a redis-server for SmallBank's balances (`cluster up` does); see redis-process.ts. */
  readonly withRedis?: boolean;
  /** Extra environment for every service (e.g. OTEL_EXPORTER_OTLP_ENDPOINT). */
  readonly env?: Readonly<Record<string, string>>;
  readonly readyTimeoutMs?: number;
  readonly onStatus?: (line: string) => void;
  /**
   * Start the cut proxy (process `cut-proxy`): every service's NATS connection and the data-plane
   * gRPC ports (memory nodes' verbs, compute nodes' descriptor memory) run through it, so
   * `lockfabric chaos partition` can cut a process off for real. Default false; `cluster up` sets it.
   */
  readonly withCutProxy?: boolean;
  /**
   * The racks whose switch input each compute node's NATS key may publish; default its own rack
   * only. A client that sends packets to other racks' switches (locks partitioned over racks)
   * needs them listed.
   */
  readonly computeSwitchRacks?: readonly number[];
  /** Plaintext gRPC and no certificates; the default is mutual TLS with a CA made for this cluster. */
  readonly insecure?: boolean;
  /** Each Node.js service writes a V8 CPU profile (`node --cpu-prof`) into this directory when it stops. */
  readonly cpuProfileDir?: string;
  /**
   * A temporary cluster: stopped (by a parent watch, see parent-watch.ts) when this process exits
   * without stopping it, even by SIGKILL. `cluster up` leaves it unset: its cluster outlives it.
   */
  readonly dieWithParent?: boolean;
}

/** `switch.policy` and `switch.lockCount` of the switch-dataplane (fisslock only). */
export interface SwitchSettings {
  readonly policy?: string;
  readonly lockCount?: number;
}

/** The switch-dataplane flags for its program settings. */
export function switchSettingFlags(settings: SwitchSettings | undefined): string[] {
  return [
    ...(settings?.policy === undefined ? [] : [`--switch.policy=${settings.policy}`]),
    ...(settings?.lockCount === undefined ? [] : [`--switch.lock-count=${settings.lockCount}`]),
  ];
}

export interface ProcessRecord {
  readonly name: string;
  readonly role: 'nats' | 'memory' | 'compute' | 'switch' | 'coordinator' | 'proxy' | 'redis';
  readonly node: number;
  readonly pid: number;
  readonly log: string;
  readonly health?: number;
  readonly grpc?: number;
  readonly memoryGrpc?: number;
  /** With the cut proxy, `grpc` and `memoryGrpc` above are its relay ports; these are the process's own. */
  readonly directGrpc?: number;
  readonly directMemoryGrpc?: number;
  /** A memory node's ComputeNodeService for clients beside its table (`bench --colocated-clients`). */
  readonly clientsGrpc?: number;
  readonly argv: readonly string[];
}

export interface ClusterState {
  readonly cluster: string;
  readonly natsUrl: string;
  /** gRPC transport security; absent in states written before TLS existed (= insecure). */
  readonly tls?: 'mtls' | 'insecure';
  /** The cluster's redis-server (SmallBank), when it started one. */
  readonly redisUrl?: string;
  /** Racks (switches) the FissLock lock ids are partitioned over, when more than one. */
  readonly racks?: number;
  readonly startedAt: string;
  readonly processes: readonly ProcessRecord[];
}

const STATE_FILE = 'cluster.json';

/** The identity role of each kind of process a local cluster runs. */
const SERVICE_ROLE = { memory: 'memory-node', compute: 'compute-node', switch: 'switch', coordinator: 'coordinator' } as const;

/** Node ids: memory nodes 0…M-1, compute nodes M…M+C-1, then the switch host and the coordinator. */
export async function startLocalCluster(options: LocalClusterOptions): Promise<ClusterState> {
  const dir = options.dir;
  mkdirSync(dir, { recursive: true });
  const existing = readClusterState(dir);
  if (existing && existing.processes.some((p) => isAlive(p.pid))) {
    throw new ClusterStateError(`a cluster is already running from ${dir} (pids ${existing.processes.map((p) => p.pid).join(', ')}); run \`lockfabric cluster down\` first`);
  }
  const say = options.onStatus ?? (() => undefined);
  // First, so that nothing this cluster starts can outlive a parent killed from here on.
  if (options.dieWithParent) parentWatches.set(dir, startParentWatch(dir));
  const cluster = options.cluster ?? 'local';
  const memoryNodes = options.memoryNodes ?? 1;
  const computeNodes = options.computeNodes ?? 2;
  const racks = options.racks ?? 1;
  const rackOf = (computeIndex: number) => rackOfComputeIndex(computeIndex, racks);
  const computeSwitchRacks = options.computeSwitchRacks ? { switchRacks: options.computeSwitchRacks } : racks > 1 ? { switchRacks: Array.from({ length: racks }, (_, r) => r) } : {};
  const processes: ProcessRecord[] = [];
  const tls = prepareLocalTls(dir, cluster, options.insecure ?? false);
  const tlsMode = tls ? 'mtls' : 'insecure';
  // NATS identities need a server we start: an external one (natsUrl) brings its own auth.
  const switchNode = memoryNodes + computeNodes;
  const natsAuth = options.natsUrl
    ? undefined
    : prepareLocalNatsAuth(
        dir,
        {
          cluster,
          services: [
            ...Array.from({ length: memoryNodes }, (_, i) => ({ name: `memory-${i}`, role: 'memory' as const, id: String(i) })),
            // A compute node of a multi-rack cluster sends each lock to its owner's switch (FissLock §5.4), so into every rack's.
            ...Array.from({ length: computeNodes }, (_, i) => ({ name: `compute-${memoryNodes + i}`, role: 'compute' as const, id: String(memoryNodes + i), rack: rackOf(i), ...computeSwitchRacks })),
            ...Array.from({ length: racks }, (_, r) => ({ name: `switch-${switchNode + r}`, role: 'switch' as const, id: String(switchNode + r), rack: r })),
            { name: `coordinator-${switchNode + racks}`, role: 'coordinator' as const, id: String(switchNode + racks) },
          ],
        },
        options.insecure ?? false,
        tls?.ca,
      );
  // The cut proxy reads NATS frames to drop chosen deliveries (`chaos partition --subjects`): it
  // ends the services' TLS with a certificate of its own from the cluster CA and re-opens TLS to nats-server.
  const proxyNatsTls = natsAuth && tls && options.withCutProxy ? issueNatsServerCertificate(tls.ca, 'cut-proxy') : undefined;
  // Seeds of an earlier run would be presented to a server that does not know them.
  if (!natsAuth) rmSync(natsDir(dir), { recursive: true, force: true });
  // This process (the CLI) talks to the cluster as its operator.
  useClusterTls(dir, tlsMode);
  useClusterNats(dir, tlsMode);
  let redisUrl: string | undefined;
  const save = () => writeClusterState(dir, { cluster, natsUrl, tls: tlsMode, ...(redisUrl ? { redisUrl } : {}), startedAt: new Date().toISOString(), processes });
  let natsUrl = options.natsUrl ?? '';
  try {
    if (!natsUrl) {
      if (!locateNatsServer()) throw new MissingToolError('nats-server', 'nats-server is not installed (apt-get install nats-server) and no NATS URL was given');
      const log = join(dir, 'nats.log');
      // Detached, so it outlives this command; its pid and command line go to cluster.json (restarts, cluster down).
      const server = await startNatsServer({ log, args: natsAuth ? ['-c', natsAuth.serverConfig] : [], freePort, startTimeoutMs: options.readyTimeoutMs ?? 15_000 });
      processes.splice(0, processes.length, { name: 'nats', role: 'nats', node: -1, pid: server.pid, log, argv: server.argv });
      natsUrl = server.url;
      save();
      say(`nats-server on ${natsUrl}${natsAuth && tls ? ' (TLS, NKeys)' : ''}`);
    }
    if (options.withRedis) {
      const redis = await startClusterRedis(dir);
      processes.push({ name: 'redis', role: 'redis', node: -1, pid: redis.pid, log: redis.log, argv: redis.argv });
      redisUrl = redis.url;
      save();
      say(`redis-server on ${redisUrl}`);
    }
    // Every service's ports are chosen up front, so the cut proxy can relay them before they start.
    const ports = new Map<string, ServicePorts>();
    const portsOf = async (name: string): Promise<ServicePorts> => {
      let assigned = ports.get(name);
      if (!assigned) {
        assigned = { health: await freePort(), grpc: await freePort(), memoryGrpc: await freePort() };
        ports.set(name, assigned);
      }
      return assigned;
    };
    const firstCompute = memoryNodes;
    let relayPorts: Readonly<Record<string, number>> | undefined;
    const localNats = isLocalNats(natsUrl);
    // Only the relay needs them early: a port probed free stays free only until someone else binds
    // it, so without the proxy each service's ports are probed just before it starts (parallel test
    // clusters on one machine otherwise race for them).
    if (options.withCutProxy && localNats) {
      for (let i = 0; i < memoryNodes; i++) await portsOf(`memory-${i}`);
      for (let i = 0; i < computeNodes; i++) await portsOf(`compute-${firstCompute + i}`);
    }
    if (options.withCutProxy && !localNats) say(`no cut proxy: NATS at ${natsUrl} is not on this machine; \`chaos partition\` falls back to SIGSTOP`);
    if (options.withCutProxy && localNats) {
      const proxy = await startCutProxy(dir, natsUrl, ports, (p) => (processes.push(p), save()), options.readyTimeoutMs ?? 15_000, proxyNatsTls);
      relayPorts = proxy.relayPorts;
      natsUrl = proxy.natsUrl;
      save();
      say(`cut-proxy      pid ${proxy.record.pid}  control :${proxy.record.health}  relays NATS and data-plane gRPC`);
    }
    const common = (role: string, node: number, health: number) => [`--cluster=${cluster}`, `--nats.url=${natsUrl}`, `--node.id=${node}`, `--health.port=${health}`];
    const env = { ...options.env };
    // --cpu-prof is refused in NODE_OPTIONS, so it goes on the command line; the file name says which service.
    const profileFlags = (name: string) => (options.cpuProfileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`, `--cpu-prof-name=${name}.cpuprofile`]);
    const launch = async (app: ServiceApp, role: keyof typeof SERVICE_ROLE, node: number, extra: (ports: { grpc: number; memoryGrpc: number }) => string[]) => {
      const name = `${role}-${node}`;
      const { health, grpc, memoryGrpc } = await portsOf(name);
      const tlsFlags = tls ? tls.flagsFor(name, SERVICE_ROLE[role], String(node)) : ['--tls.mode=insecure'];
      const natsFlags = natsAuth ? natsAuth.flagsFor(name) : [];
      const argv = [process.execPath, ...profileFlags(name), serviceEntry(app), ...common(role, node, health), ...tlsFlags, ...natsFlags, ...extra({ grpc, memoryGrpc })];
      const log = join(dir, `${role}-${node}.log`);
      // Peers reach the data-plane ports through the relay when there is one.
      const relayedGrpc = role === 'memory' ? relayPorts?.[`${name}/grpc`] : undefined;
      const relayedMemoryGrpc = role === 'compute' ? relayPorts?.[`${name}/memory-grpc`] : undefined;
      const record: ProcessRecord = {
        name,
        role,
        node,
        pid: spawnLogged(argv, log, env),
        log,
        health,
        grpc: relayedGrpc ?? grpc,
        ...(role === 'compute' ? { memoryGrpc: relayedMemoryGrpc ?? memoryGrpc } : {}),
        // a memory node serves its local clients on its third port (no relay: the driver's control path)
        ...(role === 'memory' ? { clientsGrpc: memoryGrpc } : {}),
        ...(relayedGrpc !== undefined ? { directGrpc: grpc } : {}),
        ...(relayedMemoryGrpc !== undefined ? { directMemoryGrpc: memoryGrpc } : {}),
        argv,
      };
      processes.push(record);
      save();
      return record;
    };
    const memoryRecords: ProcessRecord[] = [];
    for (let i = 0; i < memoryNodes; i++) {
      memoryRecords.push(
        await launch('memory-node', 'memory', i, ({ grpc, memoryGrpc }) => [
          `--memory.grpc-port=${grpc}`,
          `--memory.lock-count=${options.lockCount ?? 1_048_576}`,
          `--memory.entry-bytes=${options.entryBytes ?? 16}`,
          `--memory.clients-grpc-port=${memoryGrpc}`,
          `--memory.clients=${options.clientsPerComputeNode ?? 256}`,
          ...(options.memoryIopsCap ? [`--memory.iops-cap=${options.memoryIopsCap}`] : []),
        ]),
      );
    }
    await Promise.all(memoryRecords.map((r) => waitForHealth(r, options.readyTimeoutMs ?? 20_000)));
    const memoryList = memoryRecords.map((r) => `127.0.0.1:${r.grpc}`).join(',');
    const others: ProcessRecord[] = [];
    const computeRecords: ProcessRecord[] = [];
    for (let i = 0; i < computeNodes; i++) {
      computeRecords.push(
        await launch('compute-node', 'compute', memoryNodes + i, ({ grpc, memoryGrpc }) => [
          `--compute.grpc-port=${grpc}`,
          `--compute.memory-grpc-port=${memoryGrpc}`,
          `--compute.memory-nodes=${memoryList}`,
          `--compute.clients=${options.clientsPerComputeNode ?? 256}`,
          ...(racks > 1 ? [`--node.rack=${rackOf(i)}`, `--switch.racks=${racks}`] : []),
        ]),
      );
    }
    others.push(...computeRecords);
    // one switch-dataplane per rack (FissLock §5.4: each decides the lock ids it owns)
    const rackFlags = (rack: number) => (racks > 1 ? [`--switch.rack=${rack}`, `--switch.racks=${racks}`] : []);
    if (options.withSwitch ?? true) for (let r = 0; r < racks; r++) others.push(await launch('switch-dataplane', 'switch', switchNode + r, ({ grpc }) => [`--switch.grpc-port=${grpc}`, `--switch.program=${options.switchProgram ?? DEFAULT_SWITCH_PROGRAM}`, ...switchSettingFlags(options.switchSettings), ...rackFlags(r)]));
    if (options.withCoordinator ?? true) {
      // The coordinator declares an expected compute node it does not hear within a detection
      // timeout dead (it cannot tell a slow start from a death): it starts once they heartbeat.
      await Promise.all(computeRecords.map((r) => waitForHealth(r, options.readyTimeoutMs ?? 20_000)));
      const expected = computeRecords.map((r) => r.node).join(',');
      others.push(await launch('coordinator', 'coordinator', switchNode + racks, ({ grpc }) => [`--coordinator.grpc-port=${grpc}`, ...(expected ? [`--coordinator.compute-nodes=${expected}`] : []), ...(racks > 1 ? [`--switch.racks=${racks}`] : [])]));
    }
    await Promise.all(others.map((r) => waitForHealth(r, options.readyTimeoutMs ?? 20_000)));
    for (const r of [...memoryRecords, ...others]) say(`${r.name.padEnd(14)} pid ${r.pid}  grpc :${r.grpc}  health :${r.health}  log ${r.log}`);
    const state: ClusterState = { cluster, natsUrl, tls: tlsMode, ...(redisUrl ? { redisUrl } : {}), ...(racks > 1 ? { racks } : {}), startedAt: new Date().toISOString(), processes };
    writeClusterState(dir, state);
    return state;
  } catch (error) {
    await stopProcesses(processes);
    rmSync(join(dir, STATE_FILE), { force: true });
    endParentWatch(dir);
    throw error;
  }
}

/** Parent watches of the temporary clusters this process started, by directory. */
const parentWatches = new Map<string, ParentWatch>();

function endParentWatch(dir: string): void {
  parentWatches.get(dir)?.close();
  parentWatches.delete(dir);
}

/** One NATS server on this machine: the only kind the cut proxy can relay. */
function isLocalNats(url: string): boolean {
  if (url.includes(',')) return false;
  try {
    return ['127.0.0.1', 'localhost'].includes(new URL(url).hostname);
  } catch {
    return false;
  }
}

interface ServicePorts {
  readonly health: number;
  readonly grpc: number;
  readonly memoryGrpc: number;
}

/**
 * Starts the cut proxy with one route per relayed port: NATS (every service connects through it;
 * with `natsTls`, over TLS the proxy ends and re-opens),
 * each memory node's verbs port and each compute node's descriptor-memory port. Control traffic
 * (health, the driver's runs on compute.grpc, switch and coordinator gRPC) stays direct, so the
 * driver keeps observing a cut-off node.
 */
async function startCutProxy(
  dir: string,
  natsUrl: string,
  ports: ReadonlyMap<string, ServicePorts>,
  record: (p: ProcessRecord) => void,
  readyTimeoutMs: number,
  natsTls: TlsFiles | undefined,
): Promise<{ record: ProcessRecord; natsUrl: string; relayPorts: Readonly<Record<string, number>> }> {
  const nats = new URL(natsUrl);
  const relayPorts: Record<string, number> = { nats: await freePort() };
  const routes = [`nats=nats:${relayPorts['nats']}:${nats.port || '4222'}`];
  for (const [name, assigned] of ports) {
    const route = name.startsWith('memory-') ? `${name}/grpc` : `${name}/memory-grpc`;
    relayPorts[route] = await freePort();
    routes.push(`${route}=${name}:${relayPorts[route]}:${name.startsWith('memory-') ? assigned.grpc : assigned.memoryGrpc}`);
  }
  const control = await freePort();
  const log = join(dir, 'cut-proxy.log');
  const tlsFlags = natsTls ? [`--nats-tls-cert=${natsTls.cert}`, `--nats-tls-key=${natsTls.key}`, `--nats-tls-ca=${natsTls.ca}`] : [];
  const argv = [process.execPath, driverEntry('chaos/cut-proxy-main.js'), `--dir=${dir}`, `--control-port=${control}`, ...routes.map((r) => `--route=${r}`), ...tlsFlags];
  const proxy: ProcessRecord = { name: 'cut-proxy', role: 'proxy', node: -1, pid: spawnLogged(argv, log, {}), log, health: control, argv };
  record(proxy);
  await waitForHealth(proxy, readyTimeoutMs);
  return { record: proxy, natsUrl: `nats://127.0.0.1:${relayPorts['nats']}`, relayPorts };
}

export function readClusterState(dir: string): ClusterState | undefined {
  const path = join(dir, STATE_FILE);
  if (!existsSync(path)) return undefined;
  let state: ClusterState;
  try {
    state = JSON.parse(readFileSync(path, 'utf8')) as ClusterState;
  } catch (error) {
    throw new ClusterStateError(`cannot read ${path}: ${errorMessage(error)}`);
  }
  // A CLI command talks to one cluster: reading its state also picks the certificate to present.
  useClusterTls(dir, state.tls);
  useClusterNats(dir, state.tls);
  return state;
}

/**
 * Written whole, then renamed into place: the cut proxy reads cluster.json at every connection it
 * accepts to learn whose it is, and `cluster up` rewrites it after every process it starts, so a
 * reader must never see a half-written file (it would leave that connection unattributed for good).
 */
export function writeClusterState(dir: string, state: ClusterState): void {
  const file = join(dir, STATE_FILE);
  const partial = `${file}.${process.pid}.tmp`;
  writeFileSync(partial, JSON.stringify(state, null, 2) + '\n');
  renameSync(partial, file);
}

/** SIGTERM every process (services first, NATS last), then SIGKILL whatever is left after the grace. */
export async function stopLocalCluster(dir: string, graceMs = 10_000): Promise<ClusterState | undefined> {
  const state = readClusterState(dir);
  if (state) {
    await stopProcesses(state.processes, graceMs);
    rmSync(join(dir, STATE_FILE), { force: true });
  }
  endParentWatch(dir);
  return state;
}

async function stopProcesses(processes: readonly ProcessRecord[], graceMs = 10_000): Promise<void> {
  // NATS and the proxy that relays it go last: services drain through them.
  const infrastructure = (p: ProcessRecord) => p.role === 'nats' || p.role === 'proxy';
  const services = processes.filter((p) => !infrastructure(p));
  const nats = processes.filter(infrastructure);
  for (const group of [services, nats]) {
    for (const p of group) signal(p.pid, 'SIGTERM');
    const deadline = Date.now() + graceMs;
    while (group.some((p) => isAlive(p.pid)) && Date.now() < deadline) await sleep(50);
    for (const p of group) if (isAlive(p.pid)) signal(p.pid, 'SIGKILL');
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

/** Ports handed out by this process: never the same one twice, even before its service binds it. */
const handedOut = new Set<number>();
/** Below Linux's default ephemeral range (32768–60999), where outgoing connections take local ports. */
const SERVICE_PORT_LOW = 20_000;
const SERVICE_PORT_HIGH = 32_000;

/**
 * A port for a service to bind later. Probing with port 0 hands out an ephemeral port, which any
 * outgoing connection (NATS, gRPC, of this or a parallel test cluster) may take as its local port
 * before the service binds it; so ports come from a range below the ephemeral one, at random, each
 * probed free and never handed out twice by this process. Falls back to an ephemeral port.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 64; attempt++) {
    const port = SERVICE_PORT_LOW + Math.floor(Math.random() * (SERVICE_PORT_HIGH - SERVICE_PORT_LOW));
    if (handedOut.has(port)) continue;
    if (await canListen(port)) {
      handedOut.add(port);
      return port;
    }
  }
  const port = await listenOnce(0);
  handedOut.add(port);
  return port;
}

async function canListen(port: number): Promise<boolean> {
  try {
    await listenOnce(port);
    return true;
  } catch {
    return false;
  }
}

/** Listens on `port` (0: any) on every interface, as the services do, and closes; the port it got. */
function listenOnce(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, () => {
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(bound));
    });
  });
}
