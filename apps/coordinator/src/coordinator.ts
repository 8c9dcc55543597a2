import { create } from '@bufbuild/protobuf';
import type { NatsConnection } from '@nats-io/transport-node';
import { membershipViewToWire, recoveryToWire, startControlPlane } from '@lockfabric/control';
import type { ControlPlane, ControlPlaneDeps, MemberState, Membership, RecoveryBook, SwitchControlCallerFactory } from '@lockfabric/control';
import { coordinatorControlPlane, coordinatorPlugins } from '@lockfabric/lock-catalog-control';
import type { RecoveryTimings, SwitchProgramControlFactory } from '@lockfabric/lock-catalog-control';
import { MalformedInputCounter, NatsControlBus, SwitchControlClient } from '@lockfabric/live';
import type { Logger, Subjects } from '@lockfabric/live';
import type { Clock, Trace } from '@lockfabric/ports';
import type { RunningService } from '@lockfabric/service';
import { RealClock } from '@lockfabric/realtime';
import { MetricsRegistry } from '@lockfabric/telemetry';
import { pluginCounters } from './plugin-counters.js';
import { StatusResponseSchema } from '@lockfabric/wire';
import { startCoordinatorServer } from './coordinator-server.js';
import { lockAdminService } from './lock-admin/lock-admin-metrics.js';
import { GrpcDeciderControl } from './switch-control/grpc-decider-control.js';

export interface CoordinatorDeps {
  readonly nc: NatsConnection;
  readonly subjects: Subjects;
  readonly cluster: string;
  readonly heartbeatIntervalMs: number;
  readonly missesBeforeSuspect: number;
  /** CoordinatorService gRPC port; 0 picks a free one. */
  readonly grpcPort: number;
  readonly grpcHost?: string;
  /** Racks whose switches decide lock ids (`switch.racks`): a switch program's recovery writes every one. */
  readonly racks?: number;
  readonly logger: Logger;
  /** The service's registry; a private one when omitted. */
  readonly metrics?: MetricsRegistry;
  /** Wall-based time (RealClock): epochs take their floor from it. */
  readonly clock?: Clock;
  readonly confirmAfterMs?: number;
  readonly warmupMs?: number;
  readonly announceIntervalMs?: number;
  readonly maxMembers?: number;
  /** The compute nodes the deployment runs (`coordinator.computeNodes`): one not heard within a timeout of the start is declared dead. */
  readonly expectedComputeNodes?: readonly number[];
  /** Lease bounds per protocol for recovery bookkeeping, when the deployment's options differ from the defaults. */
  readonly leaseBoundsMs?: Readonly<Record<string, number>>;
  /** Finished recoveries kept for Status. */
  readonly keepRecoveries?: number;
  /**
   * After the coordinator's own NATS connection comes back, members get this long (plus the
   * suspicion timeout) to be heard again before anyone is suspected: they reconnect on their own
   * schedule. Default 1000 ms.
   */
  readonly reconnectGraceMs?: number;
  /** Spans of recoveries (FissLock: `recovery` with `recovery.S1|S2|S3`); none when omitted. */
  readonly trace?: Trace;
  /** Overrides of the recovery drivers (timings; test seams for the switch's control plane). */
  readonly drivers?: Pick<ControlPlaneDeps, 'queue'> & {
    /** Timings of the protocols' recovery plug-ins. */
    readonly recovery?: RecoveryTimings;
    readonly switchControl?: SwitchProgramControlFactory;
    /** A switch's SwitchControl service for the plug-ins' own calls; gRPC when omitted. */
    readonly switchCaller?: SwitchControlCallerFactory;
  };
}

export interface Coordinator extends RunningService {
  /** The control plane this process runs (libs/control): the same code the sim runs. */
  readonly plane: ControlPlane;
  readonly membership: Membership;
  readonly recoveries: RecoveryBook;
  readonly malformed: MalformedInputCounter;
  readonly grpcPort: number;
}

const STATES: readonly MemberState[] = ['alive', 'suspect', 'dead'];
/** A recovery's own switch calls fail fast: it retries, and the compute nodes wait on it. */
const SWITCH_CALL_DEADLINE_MS = 2_000;

/**
 * The coordinator's membership service: heartbeats in from `hb.*.*`, failure detection on a timer,
 * views out on `ctl.membership` (a new epoch per change of the live set, the same view again every
 * announce interval), and `Status` over gRPC. Input that does not decode is counted and dropped.
 */
/**
 * The coordinator process: the control plane of libs/control (membership, failure detection,
 * recovery) over NATS, the Status and LockAdmin gRPC services, and the metrics. Nothing here
 * decides anything; the sim runs the same control plane over its in-memory bus.
 */
export async function startCoordinator(deps: CoordinatorDeps): Promise<Coordinator> {
  const { nc, logger } = deps;
  const clock = deps.clock ?? new RealClock();
  const malformed = new MalformedInputCounter({ logger, clock });
  const metrics = deps.metrics ?? new MetricsRegistry();
  const heartbeats = metrics.counter({ name: 'lockfabric_coordinator_heartbeats_total', help: 'Heartbeats received, by what they did', labelNames: ['outcome'] });
  const views = metrics.counter({ name: 'lockfabric_coordinator_views_published_total', help: 'Membership views published, by reason', labelNames: ['reason'] });
  const transitionsTotal = metrics.counter({ name: 'lockfabric_coordinator_member_transitions_total', help: 'Member state changes by failure detection', labelNames: ['to'] });
  const members = metrics.gauge({ name: 'lockfabric_coordinator_members', help: 'Members known to the coordinator, by state', labelNames: ['state'] });
  const decodeErrors = metrics.counter({ name: 'lockfabric_decode_errors_total', help: 'Malformed input dropped, by source', labelNames: ['source'] });
  const recoveryCount = metrics.counter({ name: 'lockfabric_coordinator_recoveries_total', help: 'Recoveries by what happened to them', labelNames: ['event'] });
  const seenDecodeErrors = new Map<string, number>();
  const drivers = deps.drivers ?? {};

  // What the process does not own (the detector's and the books' options) passes through as it is.
  const { nc: _nc, cluster: _cluster, grpcPort: _grpcPort, grpcHost: _grpcHost, racks, metrics: _metrics, drivers: _drivers, ...options } = deps;
  // every protocol's coordinator plug-in (recovery drivers, their counters), whichever protocols they are
  const plugins = coordinatorPlugins({
    ...(racks === undefined ? {} : { racks }),
    switchControl: drivers.switchControl ?? ((address, initialValues) => new GrpcDeciderControl(address, initialValues)),
    switchCaller: drivers.switchCaller ?? ((address) => new SwitchControlClient(address, SWITCH_CALL_DEADLINE_MS)),
    ...(drivers.recovery ? { timings: drivers.recovery } : {}),
  });
  const plane = startControlPlane({
    ...options,
    bus: new NatsControlBus(nc),
    clock,
    malformed,
    ...coordinatorControlPlane(plugins),
    ...(drivers.queue ? { queue: drivers.queue } : {}),
    events: {
      heartbeat: (outcome) => heartbeats.inc({ outcome }),
      viewPublished: (reason) => views.inc({ reason }),
      transition: (to) => transitionsTotal.inc({ to }),
      recovery: (event) => recoveryCount.inc({ event }),
    },
  });
  const { membership, recoveries } = plane;
  const pluginMetrics = pluginCounters(metrics, plugins.flatMap((p) => p.counters));

  const server = await startCoordinatorServer({
    port: deps.grpcPort,
    ...(deps.grpcHost === undefined ? {} : { host: deps.grpcHost }),
    malformed,
    services: [lockAdminService(metrics, { clock, logger, malformed }).grpcService()],
    status: () => create(StatusResponseSchema, { cluster: deps.cluster, view: membershipViewToWire(membership.snapshot(clock.nowNs())), recoveries: recoveries.all().flatMap(recoveryToWire) }),
  });
  await nc.flush();
  logger.info(`coordinator of cluster ${deps.cluster}: heartbeats every ${deps.heartbeatIntervalMs} ms, suspicion after ${membership.detector.suspectAfterMs} ms; expected compute nodes: ${deps.expectedComputeNodes ? `[${deps.expectedComputeNodes.join(', ')}]` : 'none configured'}`);

  let closed = false;
  return {
    plane,
    membership,
    recoveries,
    malformed,
    grpcPort: server.port,
    ready: () => !closed,
    endpoints: { grpc: server.port },
    collectMetrics: () => {
      const counts = new Map<MemberState, number>(STATES.map((state) => [state, 0]));
      for (const member of membership.detector.members()) counts.set(member.state, (counts.get(member.state) ?? 0) + 1);
      for (const [state, n] of counts) members.set({ state }, n);
      pluginMetrics.collect();
      for (const [source, total] of Object.entries(malformed.bySource())) {
        decodeErrors.inc({ source }, total - (seenDecodeErrors.get(source) ?? 0));
        seenDecodeErrors.set(source, total);
      }
    },
    close: async () => {
      if (closed) return;
      closed = true;
      plane.close();
      await server.close();
    },
  };
}
