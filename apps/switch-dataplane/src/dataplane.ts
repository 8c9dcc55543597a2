import type { LockPacket, NodeId } from '@lockfabric/ports';
import type { Delivery, EgressAction, FaultInjector, Switch, UnicastAction } from '@lockfabric/switch';
import { DelayedDeliveries, realTimers } from './delayed-deliveries.js';
import type { Timers } from './delayed-deliveries.js';
import { errorMessage } from '@lockfabric/ports';

/** Drop reasons the data plane adds to the program's own (`no-dst`, `program-error`, …). */
/** The program threw on the packet (a rule violation or a bug); the same reason `Switch` uses. */
export const DROP_PROGRAM_ERROR = 'program-error';
export const DROP_FAULT_LOSS = 'fault-loss';
/** Lost by an ingress fault on its sender's link: the program never saw the packet. */
export const DROP_INGRESS_FAULT_LOSS = 'ingress-fault-loss';
export const DROP_DELAY_OVERFLOW = 'delay-overflow';
export const DROP_INTERNAL_ERROR = 'internal-error';
/** Held back by a delay fault when a FissLock recovery closed the switch: decided on registers S3 replaces. */
export const DROP_RECOVERY_CLOSED = 'recovery-closed';

/** Delayed copies held at most, by default, on each side (egress copies, ingress packets); more are dropped with reason `delay-overflow`. */
export const DEFAULT_MAX_DELAYED_PACKETS = 10_000;

export interface DataplaneOptions {
  readonly sw: Switch;
  readonly faults: FaultInjector;
  /** Sends one copy to a machine (SwitchIngress.egress in the service). */
  readonly egress: (machine: NodeId, packet: LockPacket) => void;
  readonly maxDelayedPackets?: number;
  readonly timers?: Timers;
  /** Told about packets that failed outside the program (rate-limit it). */
  readonly onError?: (message: string) => void;
}

export interface DataplaneStats {
  readonly packetsIn: number;
  /** Packets that went through the fault injector (ingress and egress copies decided): none while no rule is in force. */
  readonly faultPathPackets: number;
  /** Copies handed to the egress (after fan-out, faults and delays). */
  readonly copiesOut: number;
  readonly dropsByReason: Readonly<Record<string, number>>;
  /** Egress copies and ingress packets a delay or reorder fault holds back. */
  readonly delayedInFlight: number;
}

interface HeldPacket {
  readonly packet: LockPacket;
  readonly from: NodeId;
}

/**
 * The packet path of one switch: ingress faults → program → egress faults → delivery now or after
 * the fault's delay. An ingress fault acts on the sender's link, before the program: a lost packet
 * is never decided, a duplicated one is decided twice, a delayed one is decided when it arrives.
 * Every packet that does not leave is counted under a drop reason; nothing here throws back into
 * the transport, so one bad packet never stops the switch.
 */
export class Dataplane {
  private packetsIn = 0;
  private faultPathPackets = 0;
  private copiesOut = 0;
  private readonly drops = new Map<string, number>();
  private readonly delayed: DelayedDeliveries<UnicastAction>;
  private readonly heldIn: DelayedDeliveries<HeldPacket>;

  constructor(private readonly options: DataplaneOptions) {
    // Timer callbacks must not throw: an exception there would take the process down.
    const sendLater = (action: UnicastAction) => this.guard(() => this.send(action), () => `delayed copy to machine ${action.machine}`);
    const ingestLater = (held: HeldPacket) => this.guard(() => this.process(held.packet, held.from), () => `delayed ${describePacket(held.packet, held.from)}`);
    const max = options.maxDelayedPackets ?? DEFAULT_MAX_DELAYED_PACKETS;
    this.delayed = new DelayedDeliveries(max, sendLater, options.timers ?? realTimers);
    this.heldIn = new DelayedDeliveries(max, ingestLater, options.timers ?? realTimers);
  }

  handle(packet: LockPacket, fromMachine: NodeId): void {
    this.packetsIn++;
    // No rules in force (the usual live run): no ingress or egress copies to decide, so none are built.
    if (this.options.faults.spec.rules.length === 0) {
      this.passThrough(packet, fromMachine);
      return;
    }
    this.faultPathPackets++;
    this.guard(
      () => {
        const copies = this.options.faults.applyIngress(packet, fromMachine);
        if (copies.length === 0) this.drop(DROP_INGRESS_FAULT_LOSS);
        for (const copy of copies) {
          if (copy.delayNs <= 0) this.process(copy.packet, fromMachine);
          else if (!this.heldIn.schedule({ packet: copy.packet, from: fromMachine }, copy.delayNs)) this.drop(DROP_DELAY_OVERFLOW);
        }
      },
      () => describePacket(packet, fromMachine),
    );
  }

  /** One packet (or ingress copy) through the program and the egress faults. */
  private process(packet: LockPacket, fromMachine: NodeId): void {
    const actions = this.ingest(packet, fromMachine);
    if (actions === undefined) return;
    this.guard(
      () => {
        for (const action of actions) if (action.kind === 'drop') this.drop(action.reason);
        const deliveries = this.options.faults.apply(actions, fromMachine);
        const lost = countCopies(actions) - countOriginals(deliveries);
        if (lost > 0) this.drop(DROP_FAULT_LOSS, lost);
        for (const delivery of deliveries) this.deliver(delivery);
      },
      () => describePacket(packet, fromMachine),
    );
  }

  /** The program's actions sent as they are: what `process` does when the injector has no rule to apply. */
  private passThrough(packet: LockPacket, fromMachine: NodeId): void {
    const actions = this.ingest(packet, fromMachine);
    if (actions === undefined) return;
    this.guard(
      () => {
        for (const action of actions) {
          switch (action.kind) {
            case 'unicast':
              this.send(action);
              break;
            case 'multicast':
              for (const machine of action.machines) this.send({ kind: 'unicast', machine, packet: action.packet });
              break;
            case 'bounce':
              this.send({ kind: 'unicast', machine: fromMachine, packet: action.packet });
              break;
            case 'drop':
              this.drop(action.reason);
              break;
          }
        }
      },
      () => describePacket(packet, fromMachine),
    );
  }

  /** The program's actions for one packet, or undefined when it threw (counted and reported here). */
  private ingest(packet: LockPacket, fromMachine: NodeId): EgressAction[] | undefined {
    try {
      return this.options.sw.ingest(packet, fromMachine);
    } catch (error) {
      // The switch has already undone the packet's register writes and counted the error kind.
      this.drop(DROP_PROGRAM_ERROR);
      this.options.onError?.(`switch program '${this.options.sw.program.name}' failed on ${describePacket(packet, fromMachine)}: ${errorMessage(error)}`);
      return undefined;
    }
  }

  stats(): DataplaneStats {
    return {
      packetsIn: this.packetsIn,
      faultPathPackets: this.faultPathPackets,
      copiesOut: this.copiesOut,
      dropsByReason: Object.fromEntries(this.drops),
      delayedInFlight: this.delayed.inFlight + this.heldIn.inFlight,
    };
  }

  /**
   * Drops every copy a delay fault still holds: a recovery closed the switch, and those copies were
   * decided before it, on registers S3 rewrites; delivered after S2 they could acknowledge or grant
   * against the repaired state (a stale ACK's seq matching a packet of the node's new link). Packets
   * an ingress delay holds go too: they passed admission before the close, and decided after it
   * they would bypass the fence.
   */
  discardDelayed(): number {
    const n = this.heldIn.discard() + this.delayed.discard();
    if (n > 0) this.drop(DROP_RECOVERY_CLOSED, n);
    return n;
  }

  /** Ingests every held ingress packet and sends every held copy now: on shutdown, accepted packets leave rather than vanish. */
  drain(): void {
    this.heldIn.flush();
    this.delayed.flush();
  }

  private deliver(delivery: Delivery): void {
    if (delivery.delayNs <= 0) this.send(delivery.action);
    else if (!this.delayed.schedule(delivery.action, delivery.delayNs)) this.drop(DROP_DELAY_OVERFLOW);
  }

  private send(action: UnicastAction): void {
    this.copiesOut++;
    this.options.egress(action.machine, action.packet);
  }

  private guard(run: () => void, what: () => string): void {
    try {
      run();
    } catch (error) {
      this.drop(DROP_INTERNAL_ERROR);
      this.options.onError?.(`switch: ${what()} failed: ${errorMessage(error)}`);
    }
  }

  private drop(reason: string, count = 1): void {
    this.drops.set(reason, (this.drops.get(reason) ?? 0) + count);
  }
}

function describePacket(packet: LockPacket, fromMachine: NodeId): string {
  return `packet ${packet.type} lock ${packet.lock} from machine ${fromMachine}`;
}

/** Unicast copies the actions make (what `expandEgress` would list), without building them. */
function countCopies(actions: readonly EgressAction[]): number {
  let n = 0;
  for (const action of actions) {
    if (action.kind === 'multicast') n += action.machines.length;
    else if (action.kind !== 'drop') n++;
  }
  return n;
}

function countOriginals(deliveries: readonly Delivery[]): number {
  let n = 0;
  for (const delivery of deliveries) if (!delivery.duplicate) n++;
  return n;
}
