import { HistoryRecorder, checkHistory } from '@lockfabric/check';
import type { Verdict } from '@lockfabric/check';
import { clientKey } from '@lockfabric/ports';
import type { ClientPorts, LockId, LockMode, RemoteAddr } from '@lockfabric/ports';
import { createSimCluster } from '@lockfabric/sim';
import type { InMemoryCluster, VirtualScheduler } from '@lockfabric/sim';
import { pausablePorts } from '@lockfabric/workloads';
import type { PauseWindow } from '@lockfabric/workloads';
import { WordLayout, createDslrClient, readDslrOptions } from '../../src/index.js';
import type { Counters, DslrAcquireOptions, DslrClient, DslrGrant } from '../../src/index.js';

export type Options = Record<string, string | number | boolean>;

/** What one scripted lock holder did. */
export interface HoldOutcome {
  readonly client: string;
  readonly granted: boolean;
  readonly error?: string;
  readonly grantNs?: number;
  readonly releaseError?: string;
  readonly releasedNs?: number;
  readonly grant?: DslrGrant;
}

export interface HoldScript {
  /** Virtual time of the acquire. */
  readonly atNs: number;
  readonly lock?: LockId;
  readonly mode: LockMode | 'update';
  /** Time held before release; `Infinity` never releases (a crashed holder). */
  readonly holdNs: number;
  readonly acquire?: DslrAcquireOptions;
  /** Keep this hold out of the recorded history (a holder whose misbehaviour is the premise). */
  readonly unrecorded?: boolean;
}

/**
 * A deterministic sim cluster (no jitter) with DSLR clients under per-client options and a history
 * recorder, for the paper's scenarios and the defect demonstrations.
 */
export class Scenario {
  readonly cluster: InMemoryCluster;
  readonly scheduler: VirtualScheduler;
  readonly history = new HistoryRecorder();
  private clientCount = 0;
  private readonly pending: Promise<unknown>[] = [];
  private readonly names = new WeakMap<DslrClient, string>();

  constructor(
    readonly base: Options = {},
    seed = 1,
  ) {
    const built = createSimCluster({ seed, lockCount: 8, entryBytes: 8, jitterNs: 0 });
    this.cluster = built.cluster;
    this.scheduler = built.scheduler;
  }

  get layout(): WordLayout {
    const options = readDslrOptions(this.base);
    return WordLayout.of(options.layout, options.counterLimit);
  }

  addr(lock: LockId): RemoteAddr {
    const table = this.cluster.layout.memoryNodes[0]!;
    return { node: table.node, region: table.region, rkey: table.rkey, offset: table.baseOffset + lock * 8 };
  }

  word(lock = 0): bigint {
    return this.cluster.node(this.cluster.memoryNodeIds[0]!).memory.cpuLoad(this.addr(lock));
  }

  counters(lock = 0): Counters {
    return this.layout.decode(this.word(lock));
  }

  setCounters(c: Partial<Counters>, lock = 0): void {
    const full = { nX: 0, nS: 0, nU: 0, maxX: 0, maxS: 0, maxU: 0, ...c };
    this.cluster.node(this.cluster.memoryNodeIds[0]!).memory.cpuStore(this.addr(lock), this.layout.encode(full));
  }

  ports(): ClientPorts {
    const index = this.clientCount++;
    return this.cluster.clientPorts({ node: this.cluster.computeNodeIds[index % this.cluster.computeNodeIds.length]!, client: index });
  }

  client(extra: Options = {}): DslrClient {
    const ports = this.ports();
    const client = createDslrClient(ports, readDslrOptions({ ...this.base, ...extra }));
    this.names.set(client, clientKey(ports.self));
    return client;
  }

  /**
   * A client whose process is stopped during `windows` (absolute virtual times): it takes no step
   * then, and a verb it posts less than `sendLagNs` before a window starts leaves after the window.
   */
  pausedClient(windows: readonly PauseWindow[], sendLagNs: number, extra: Options = {}): DslrClient {
    const ports = pausablePorts(this.ports(), windows, sendLagNs);
    const client = createDslrClient(ports, readDslrOptions({ ...this.base, ...extra }));
    this.names.set(client, clientKey(ports.self));
    return client;
  }

  nameOf(client: DslrClient): string {
    return this.names.get(client) ?? '?';
  }

  /** Runs `fn` at virtual time `atNs`. */
  at<T>(atNs: number, fn: () => Promise<T>): Promise<T> {
    const result = this.cluster.clock.sleep(Math.max(0, atNs - this.cluster.clock.nowNs())).then(fn);
    this.pending.push(result.catch(() => undefined));
    return result;
  }

  /** Acquire at `atNs`, hold, release; every step recorded unless `unrecorded`. */
  hold(client: DslrClient, script: HoldScript): Promise<HoldOutcome> {
    const lock = script.lock ?? 0;
    const mode: LockMode = script.mode === 'shared' ? 'shared' : 'exclusive';
    const name = this.nameOf(client);
    const clock = this.cluster.clock;
    const record = !script.unrecorded;
    return this.at(script.atNs, async () => {
      if (record) this.history.invoke(name, 'acquire', lock, mode, clock.nowNs());
      let grant: DslrGrant;
      try {
        grant = script.mode === 'update' ? await client.acquireUpdate(lock, script.acquire) : await client.acquire(lock, script.mode, script.acquire);
      } catch (error) {
        const errorName = (error as Error).name;
        if (record) this.history.fail(name, 'acquire', lock, mode, clock.nowNs(), errorName);
        return { client: name, granted: false, error: errorName };
      }
      const grantNs = clock.nowNs();
      if (record) this.history.ok(name, 'acquire', lock, mode, grantNs);
      if (!Number.isFinite(script.holdNs)) return { client: name, granted: true, grantNs, grant };
      await clock.sleep(script.holdNs);
      if (record) this.history.invoke(name, 'release', lock, mode, clock.nowNs());
      try {
        await client.release(grant);
      } catch (error) {
        if (record) this.history.fail(name, 'release', lock, mode, clock.nowNs(), (error as Error).name);
        return { client: name, granted: true, grantNs, grant, releaseError: (error as Error).name, releasedNs: clock.nowNs() };
      }
      if (record) this.history.ok(name, 'release', lock, mode, clock.nowNs());
      return { client: name, granted: true, grantNs, grant, releasedNs: clock.nowNs() };
    });
  }

  /** Runs the simulation until idle or `untilNs`. */
  async run(untilNs = Number.POSITIVE_INFINITY): Promise<void> {
    await this.scheduler.run(Number.isFinite(untilNs) ? { untilNs } : {});
  }

  verdict(failedClients: Record<string, number> = {}): Verdict {
    return checkHistory(this.history, { failedClients });
  }
}
