import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { MalformedInputCounter, RateLimitedLog, SwitchIngress } from '@lockfabric/live';
import type { Logger, Subjects } from '@lockfabric/live';
import type { Clock } from '@lockfabric/ports';
import type { RunningService } from '@lockfabric/service';
import { RealClock } from '@lockfabric/realtime';
import { SeededRandom } from '@lockfabric/random';
import { FaultInjector, Switch } from '@lockfabric/switch';
import type { SwitchProgram } from '@lockfabric/switch';
import { MetricsRegistry } from '@lockfabric/telemetry';
import { FaultSpecSchema, decodeWire } from '@lockfabric/wire';
import { PacketAdmission } from './admission.js';
import { admitBatches, followAdmissionOrders } from './admission-filter.js';
import { Dataplane } from './dataplane.js';
import { EchoResponder, subscribeEcho } from './echo-responder.js';
import type { Timers } from './delayed-deliveries.js';
import { faultFromWire, faultTargetsRack } from './fault-spec-wire.js';
import { startSwitchControlServer } from './switch-control-server.js';
import { SwitchFaults } from './switch-faults.js';
import { programFacts } from '@lockfabric/lock-catalog';
import { registerSwitchMetrics } from './switch-metrics.js';

/** The fault target the switch listens to on `ctl.fault.<target>`. */
export const SWITCH_FAULT_TARGET = 'switch';

export interface SwitchDataplaneDeps {
  readonly nc: NatsConnection;
  readonly subjects: Subjects;
  readonly rack: number;
  /** This switch's node id, which the coordinator's admission orders name (0: obey orders for any switch). */
  readonly node?: number;
  /** Built by `createSwitchProgram(config.switch.program, settings)`. */
  readonly program: SwitchProgram;
  /** SwitchControl gRPC port; 0 picks a free one. */
  readonly grpcPort: number;
  readonly grpcHost?: string;
  readonly logger: Logger;
  /** The service's registry; a private one when omitted. */
  readonly metrics?: MetricsRegistry;
  readonly clock?: Clock;
  /** Seed of the fault injector's draws; logged, so a chaos run's fault pattern can be replayed. */
  readonly faultSeed?: number;
  readonly maxDelayedPackets?: number;
  readonly reorderWindowNs?: number;
  readonly timers?: Timers;
}

export interface SwitchDataplane extends RunningService {
  readonly sw: Switch;
  readonly dataplane: Dataplane;
  readonly faults: SwitchFaults;
  /** The fault injector the rules of `faults` drive; its stats say what they did, per direction. */
  readonly injector: FaultInjector;
  readonly malformed: MalformedInputCounter;
  readonly grpcPort: number;
  /** The recovery fence of stamped lock packets: closed at start, opened by the coordinator. */
  readonly admission: PacketAdmission;
}

/**
 * One rack's switch as a service: packets from `sw.<rack>.in` run through the program and the
 * fault injector and leave on `node.<machine>.pkt`; faults arrive over SwitchControl.SetFaults and
 * on `ctl.fault.switch`; registers are read and written over SwitchControl.
 */
export async function startSwitchDataplane(deps: SwitchDataplaneDeps): Promise<SwitchDataplane> {
  const { nc, subjects, rack, logger } = deps;
  const clock = deps.clock ?? new RealClock();
  const malformed = new MalformedInputCounter({ logger, clock });
  const warnLog = new RateLimitedLog(logger, clock);
  // 'throw' so the data plane sees the program's error and can log it; it never escapes the data plane.
  const sw = new Switch(deps.program, { onProgramError: 'throw' });
  const faultSeed = deps.faultSeed ?? Date.now() >>> 0;
  const injector = new FaultInjector(new SeededRandom(faultSeed));
  const faults = new SwitchFaults(injector);

  const dataplane = new Dataplane({
    sw,
    faults: injector,
    // Called only for packets the ingress below delivered, so it exists by then.
    egress: (machine, packet) => ingress.egress(machine, packet),
    ...(deps.maxDelayedPackets === undefined ? {} : { maxDelayedPackets: deps.maxDelayedPackets }),
    ...(deps.timers === undefined ? {} : { timers: deps.timers }),
    onError: (message) => warnLog.warn(message),
  });
  // lock packets stamped with a membership epoch pass only once the coordinator opened the switch (README "Admission")
  const admission = new PacketAdmission();
  // copies a delay fault holds were decided before the recovery that closes the switch: they go (README "Admission")
  const onClose = (): void => {
    const dropped = dataplane.discardDelayed();
    if (dropped > 0) logger.info(`switch admission closed: ${dropped} delayed copies decided before the recovery dropped`);
  };
  const admissionOrders = followAdmissionOrders({ nc, subjects, node: deps.node ?? 0, admission, logger, malformed, onClose });
  const ingress = new SwitchIngress({ nc, subjects, rack, logger, malformed, admit: admitBatches(admission), onPacket: (packet, from) => dataplane.handle(packet, from) });

  // the transport floor of a switch lock: requests answered with their own payload (bench --substrate live)
  const echo = new EchoResponder(subjects.switchEcho(rack), malformed);
  const echoSubscription = subscribeEcho(nc, subjects.switchEcho(rack), echo);

  const faultSubject = subjects.fault(SWITCH_FAULT_TARGET);
  const faultSubscription: Subscription = nc.subscribe(faultSubject, {
    callback: (error, msg) => {
      if (error) {
        warnLog.warn(`switch: subscription error on ${faultSubject}: ${error.message}`);
        return;
      }
      try {
        const spec = decodeWire(FaultSpecSchema, msg.data, faultSubject);
        if (!faultTargetsRack(spec.target, rack)) return;
        const fault = faultFromWire(spec, faultSubject, deps.reorderWindowNs);
        faults.upsert(fault);
        logger.info(`fault ${fault.key} ${fault.rule ? 'set' : 'cleared'} from ${faultSubject}: ${faults.active} rule(s) active`);
      } catch (decodeError) {
        malformed.record(faultSubject, decodeError);
      }
    },
  });

  const control = await startSwitchControlServer({
    sw,
    rack,
    faults,
    malformed,
    logger,
    port: deps.grpcPort,
    program: deps.program,
    admission,
    // NetLock purge grants leave like the program's egress, but skip the program and the fault injector.
    emit: (machine, packet) => ingress.egress(machine, packet),
    ...(deps.grpcHost === undefined ? {} : { host: deps.grpcHost }),
    ...(deps.reorderWindowNs === undefined ? {} : { reorderWindowNs: deps.reorderWindowNs }),
  });
  // Subscriptions are registered with the server before we call the switch ready.
  await nc.flush();
  const collectMetrics = registerSwitchMetrics(deps.metrics ?? new MetricsRegistry(), { sw, dataplane, injector, malformed, admission, echo });
  const facts = programFacts(deps.program);
  const locks = facts.lockCount > 0 ? `${facts.lockCount} locks of a capacity of ${facts.lockCapacity}, ` : '';
  const policy = facts.policy ? `policy ${facts.policy}, ` : '';
  logger.info(`switch for rack ${rack} running program '${deps.program.name}' (${policy}${locks}${sw.describe().registerBytes} register bytes); fault seed ${faultSeed}`);

  let closed = false;
  return {
    sw,
    dataplane,
    faults,
    injector,
    malformed,
    admission,
    grpcPort: control.port,
    ready: () => !closed,
    endpoints: { grpc: control.port, rack, program: deps.program.name },
    collectMetrics,
    close: async () => {
      if (closed) return;
      closed = true;
      faultSubscription.unsubscribe();
      echoSubscription.unsubscribe();
      admissionOrders.unsubscribe();
      dataplane.drain();
      ingress.close();
      await control.close();
    },
  };
}
