import type { ProtocolOptions } from '@lockfabric/locks-common';
import type { ClientAddress, Trace } from '@lockfabric/ports';
import { createSimCluster } from '@lockfabric/sim';
import type { InMemoryCluster, VirtualScheduler } from '@lockfabric/sim';
import { ENTRY_BYTES, createAlockClient } from '../../src/index.js';
import type { AlockClient, AlockEvent } from '../../src/index.js';

export interface ScriptedSim {
  readonly cluster: InMemoryCluster;
  readonly scheduler: VirtualScheduler;
  /** Every protocol step of every client made with `client()`, in the order reported. */
  readonly events: AlockEvent[];
  /** The lock's home node. */
  readonly home: number;
  readonly computeNodes: readonly number[];
  client(address: ClientAddress, options?: ProtocolOptions): AlockClient;
  /** Runs `body` starting at virtual time `atNs`. */
  at<T>(atNs: number, body: () => Promise<T>): Promise<T>;
  /** Runs the simulation until every scheduled event is done, then settles `tasks`. */
  run<T>(tasks: readonly Promise<T>[]): Promise<T[]>;
}

export interface ScriptedSimOptions {
  readonly seed?: number;
  readonly lockCount?: number;
  readonly computeNodes?: number;
  /** Largest gap inside a local CPU RMW (default: the simulator's). */
  readonly localRmwGapNs?: number;
  readonly trace?: Trace;
}

/** A sim cluster with no schedule jitter, for scripted scenarios with predictable interleavings. */
export function scriptedSim(options: ScriptedSimOptions = {}): ScriptedSim {
  const { cluster, scheduler } = createSimCluster({
    seed: options.seed ?? 1,
    lockCount: options.lockCount ?? 4,
    entryBytes: ENTRY_BYTES,
    computeNodes: options.computeNodes ?? 2,
    jitterNs: 0,
    ...(options.localRmwGapNs !== undefined ? { localRmwGapNs: options.localRmwGapNs } : {}),
    ...(options.trace ? { trace: options.trace } : {}),
  });
  const events: AlockEvent[] = [];
  return {
    cluster,
    scheduler,
    events,
    home: cluster.memoryNodeIds[0]!,
    computeNodes: cluster.computeNodeIds,
    client: (address, protocolOptions) => createAlockClient(cluster.clientPorts(address), protocolOptions, (e) => events.push(e)),
    at: async (atNs, body) => {
      await cluster.clock.sleep(Math.max(0, atNs - cluster.clock.nowNs()));
      return body();
    },
    run: async (tasks) => {
      const all = Promise.all(tasks);
      all.catch(() => undefined); // observed by the caller after the run
      await scheduler.run();
      return all;
    },
  };
}
