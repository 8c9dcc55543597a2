import { createSubjects } from '@lockfabric/live';
import { join } from 'node:path';
import { readClusterState, writeClusterState } from '../cluster/local-cluster.js';
import { NatsServerStartError, logSize, waitForNatsReady } from '@lockfabric/nats-server';
import { isAlive, isRunning, isZombie, sleep, spawnLogged, waitForHealth } from '../cluster/process-control.js';
import type { ClusterState, ProcessRecord } from '../cluster/local-cluster.js';
import type { SwitchFaultRequest } from './chaos-request.js';
import { applySwitchFaults } from './switch-faults.js';
import { CutProxyClient } from './cut-client.js';
import type { HealReport } from './cut-relay.js';
import { LockFabricError } from '@lockfabric/ports';

/** How much longer than asked the cut proxy is told to keep a cut, as a safety heal if the caller dies. */
export const PARTITION_SAFETY_MS = 1_000;

/** A chaos action named a process that cluster.json does not list, or the cluster is not there. */
export class ChaosTargetError extends LockFabricError {
  readonly code = 'CHAOS_TARGET';
  constructor(message: string) {
    super(message);
    this.name = 'ChaosTargetError';
  }
}

/** What one action did, for the command's output and for tests. */
export interface ChaosOutcome {
  readonly verb: string;
  readonly target: string;
  readonly pid: number;
  /** The pid after a restart. */
  readonly newPid?: number;
  readonly detail: string;
}

export interface LocalChaosOptions {
  /** How long a restarted process may take to be ready (health /readyz, or NATS's port). */
  readonly readyTimeoutMs?: number;
  /** SIGTERM grace before SIGKILL when restarting a live process. */
  readonly graceMs?: number;
}

/**
 * Chaos against the local cluster of `lockfabric cluster up` (or `startLocalCluster`), through the
 * pids, ports and argv recorded in DIR/cluster.json. Every action re-reads the file, so several
 * actors (a test and the CLI) see each other's restarts.
 */
export class LocalChaos {
  private readonly readyTimeoutMs: number;
  private readonly graceMs: number;

  constructor(
    readonly dir: string,
    options: LocalChaosOptions = {},
  ) {
    this.readyTimeoutMs = options.readyTimeoutMs ?? 30_000;
    this.graceMs = options.graceMs ?? 5_000;
  }

  state(): ClusterState {
    const state = readClusterState(this.dir);
    if (!state) throw new ChaosTargetError(`no cluster in ${this.dir} (start one with \`lockfabric cluster up --dir ${this.dir}\`)`);
    return state;
  }

  /** The record of `target`; `switch` alone names the cluster's only switch. */
  process(target: string): ProcessRecord {
    const processes = this.state().processes;
    const record = target === 'switch' ? onlySwitch(processes) : processes.find((p) => p.name === target);
    if (!record) throw new ChaosTargetError(`no process ${JSON.stringify(target)} in ${join(this.dir, 'cluster.json')}; there are: ${processes.map((p) => p.name).join(', ')}`);
    return record;
  }

  /** SIGKILL: the crash DESIGN §7 says the system must survive. Resolves once the process is gone. */
  async kill(target: string): Promise<ChaosOutcome> {
    const record = this.live(target, 'kill');
    process.kill(record.pid, 'SIGKILL');
    await waitGone(record.pid, this.graceMs);
    return { verb: 'kill', target: record.name, pid: record.pid, detail: `SIGKILL sent to ${record.name} (pid ${record.pid}); it is gone` };
  }

  /** SIGSTOP: the process freezes (an event-loop stall of unbounded length); its sockets stay open. */
  async pause(target: string): Promise<ChaosOutcome> {
    const record = this.live(target, 'pause');
    process.kill(record.pid, 'SIGSTOP');
    return { verb: 'pause', target: record.name, pid: record.pid, detail: `SIGSTOP sent to ${record.name} (pid ${record.pid})` };
  }

  /** SIGCONT: a paused process goes on where it stopped, with its clock jumped forward. */
  async resume(target: string): Promise<ChaosOutcome> {
    const record = this.live(target, 'resume');
    process.kill(record.pid, 'SIGCONT');
    return { verb: 'resume', target: record.name, pid: record.pid, detail: `SIGCONT sent to ${record.name} (pid ${record.pid})` };
  }

  /**
   * Partition: `target` is cut off from every other process for `durationMs`, then healed.
   *
   * With the cut proxy (`lockfabric cluster up` starts it; see cut-relay.ts) the cut is real: the
   * proxy stops every relayed connection of the target — its NATS connection, the verbs streams
   * it opened to memory nodes, peers' streams to its descriptor memory — in both directions,
   * without closing them. The target keeps running: its timers fire, its clients time out, it
   * still believes it holds its locks, and what it sent during the cut arrives after the heal, as
   * in a real partition. This call heals explicitly after `durationMs` and reports what was
   * released; the proxy is told a slightly longer cut (PARTITION_SAFETY_MS), so it heals by itself
   * should this caller die, without racing the explicit heal.
   *
   * Fallback, for clusters started without the proxy (`startLocalCluster` without
   * `withCutProxy`): the target is frozen (SIGSTOP) for the duration and resumed. Peers see the
   * same silence, but the target's own timers stall too, so its late traffic after the heal is
   * only what was already queued. On Kubernetes the same verb applies a deny-all NetworkPolicy.
   */
  async partition(target: string, durationMs: number, subjects?: readonly string[]): Promise<ChaosOutcome> {
    const record = this.live(target, 'partition');
    const proxy = this.cutProxy();
    if (subjects !== undefined) return this.partialPartition(record, durationMs, subjects, proxy);
    if (proxy) {
      const cut = await proxy.cut(record.name, durationMs + PARTITION_SAFETY_MS);
      const healed = await healAfter(proxy, record.name, durationMs);
      return {
        verb: 'partition',
        target: record.name,
        pid: record.pid,
        detail: `${record.name} (pid ${record.pid}) cut off for ${durationMs} ms by the cut proxy (${cut.connections} connection(s), still running), then healed: ${healed.releasedBytes} held byte(s) released`,
      };
    }
    process.kill(record.pid, 'SIGSTOP');
    try {
      await sleep(durationMs);
    } finally {
      if (isAlive(record.pid)) process.kill(record.pid, 'SIGCONT');
    }
    return {
      verb: 'partition',
      target: record.name,
      pid: record.pid,
      detail: `${record.name} (pid ${record.pid}) cut off for ${durationMs} ms (no cut proxy in this cluster — start it with 'cluster up --cut-proxy' for a real cut: emulated by SIGSTOP/SIGCONT, its own timers stalled too), then healed`,
    };
  }

  /**
   * Partial partition (`--subjects`): for `durationMs`, NATS deliveries to `target` on any of
   * `subjects` — patterns under the cluster's subject prefix, e.g. `ctl.fiss.2.>` — are dropped by
   * the cut proxy; everything else flows, so it keeps heartbeating while, say, it never hears a
   * recovery call (a gray failure). Needs the cut proxy: SIGSTOP cannot drop some messages only.
   */
  private async partialPartition(record: ProcessRecord, durationMs: number, subjects: readonly string[], proxy: CutProxyClient | undefined): Promise<ChaosOutcome> {
    if (!proxy) throw new ChaosTargetError(`partition --subjects needs the cluster's cut proxy (start the cluster with \`cluster up --cut-proxy\`): without it no message can be dropped selectively`);
    const prefix = createSubjects(this.state().cluster).prefix;
    const patterns = subjects.map((s) => `${prefix}.${s}`);
    const order = await proxy.drop(record.name, patterns, durationMs + PARTITION_SAFETY_MS);
    const healed = await healAfter(proxy, record.name, durationMs);
    return {
      verb: 'partition',
      target: record.name,
      pid: record.pid,
      detail: `${record.name} (pid ${record.pid}) missed NATS deliveries on ${patterns.join(', ')} for ${durationMs} ms (${order.connections} NATS connection(s) followed by the cut proxy; everything else flowed): ${healed.droppedMessages ?? 0} message(s) dropped`,
    };
  }

  /** The cluster's cut proxy, when it was started with one; a clear error when it is recorded but gone. */
  cutProxy(): CutProxyClient | undefined {
    const record = this.state().processes.find((p) => p.role === 'proxy');
    if (!record) return undefined;
    if (!isAlive(record.pid) || isZombie(record.pid) || record.health === undefined) {
      throw new ChaosTargetError(`the cluster's cut proxy (pid ${record.pid}) is not running, so nothing can be cut off; see ${record.log}, and restart the cluster (lockfabric cluster down, then up)`);
    }
    return new CutProxyClient(record.health);
  }

  /**
   * Restart with the recorded argv: a live process is stopped first (SIGTERM, SIGKILL after the
   * grace), and the new pid replaces the old one in cluster.json once the process is ready. The
   * new process keeps its ports, so peers reach it at the old address; a service starts with a new
   * incarnation (and a memory node with empty memory).
   */
  async restart(target: string): Promise<ChaosOutcome> {
    const record = this.process(target);
    if (isAlive(record.pid)) {
      process.kill(record.pid, 'SIGTERM');
      // A paused process handles SIGTERM only once it runs again.
      process.kill(record.pid, 'SIGCONT');
      if (!(await waitGone(record.pid, this.graceMs))) {
        process.kill(record.pid, 'SIGKILL');
        await waitGone(record.pid, this.graceMs);
      }
    }
    const fromByte = logSize(record.log);
    const pid = spawnLogged(record.argv, record.log);
    const updated: ProcessRecord = { ...record, pid };
    this.replace(updated);
    if (record.role === 'nats') await this.waitForNats(updated, fromByte);
    else await waitForHealth(updated, this.readyTimeoutMs, 'restart');
    return { verb: 'restart', target: record.name, pid: record.pid, newPid: pid, detail: `${record.name} restarted: pid ${record.pid} -> ${pid}, ready` };
  }

  /**
   * The restarted nats-server must bind its old port (the services reconnect to it): when another
   * process took the port meanwhile, the restart fails loudly instead of letting a connect to that
   * process pass for readiness.
   */
  private async waitForNats(record: ProcessRecord, fromByte: number): Promise<void> {
    const port = natsPortOf(record, this.state().natsUrl);
    try {
      await waitForNatsReady({ pid: record.pid, port, log: record.log, fromByte, timeoutMs: this.readyTimeoutMs, isAlive: isRunning });
    } catch (error) {
      if (error instanceof NatsServerStartError && error.exited) throw new ChaosTargetError(`${record.name} could not listen on its port ${port} again (taken by another process?): ${error.message}`);
      throw error;
    }
  }

  /** Restarts nats-server in place (same port): clients see a disconnect and reconnect. */
  async natsRestart(): Promise<ChaosOutcome> {
    const nats = this.state().processes.find((p) => p.role === 'nats');
    if (!nats) throw new ChaosTargetError(`the cluster in ${this.dir} uses an external NATS (${this.state().natsUrl}); restart that server yourself`);
    const outcome = await this.restart(nats.name);
    return { ...outcome, verb: 'nats-restart' };
  }

  /** Replaces every packet fault of a switch over its SwitchControl API. */
  async switchFaults(target: string, faults: SwitchFaultRequest, address?: string): Promise<ChaosOutcome> {
    const record = address === undefined ? this.live(target, 'switch-faults') : undefined;
    if (record && record.role !== 'switch') throw new ChaosTargetError(`${record.name} is not a switch`);
    const to = address ?? `127.0.0.1:${record?.grpc}`;
    const active = await applySwitchFaults(to, faults);
    return { verb: 'switch-faults', target: record?.name ?? to, pid: record?.pid ?? 0, detail: `switch ${record?.name ?? to}: ${active} fault rule(s) active` };
  }

  private live(target: string, verb: string): ProcessRecord {
    const record = this.process(target);
    if (!isAlive(record.pid) || isZombie(record.pid)) throw new ChaosTargetError(`${record.name} (pid ${record.pid}) is not running; nothing to ${verb} (use restart)`);
    return record;
  }

  private replace(record: ProcessRecord): void {
    const state = this.state();
    const next: ClusterState = { ...state, processes: state.processes.map((p) => (p.name === record.name ? record : p)) };
    writeClusterState(this.dir, next);
  }
}

function onlySwitch(processes: readonly ProcessRecord[]): ProcessRecord | undefined {
  const switches = processes.filter((p) => p.role === 'switch');
  return switches.length === 1 ? switches[0] : undefined;
}

/** nats-server's own port: from its argv (`-p PORT`), since with the cut proxy the URL names the relay. */
function natsPortOf(record: ProcessRecord, url: string): number {
  const flag = record.argv.indexOf('-p');
  const port = flag >= 0 ? Number(record.argv[flag + 1]) : Number.NaN;
  return Number.isInteger(port) && port > 0 ? port : natsPort(url);
}

function natsPort(url: string): number {
  const port = Number(new URL(url).port);
  if (!Number.isInteger(port) || port <= 0) throw new ChaosTargetError(`cannot tell the NATS port from ${url}`);
  return port;
}

async function waitGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid) && !isZombie(pid)) {
    if (Date.now() > deadline) return false;
    await sleep(20);
  }
  return true;
}

/** Waits `durationMs`, then heals `target` at the proxy and returns what the heal released. */
async function healAfter(proxy: CutProxyClient, target: string, durationMs: number): Promise<HealReport> {
  await sleep(durationMs);
  return proxy.heal(target);
}
