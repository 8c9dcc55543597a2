import type { LockPacket, NodeId, PacketType, Random } from '@lockfabric/ports';
import { expandEgress } from './egress.js';
import type { EgressAction, UnicastAction } from './egress.js';
import { NO_FAULTS, parseFaultSpec } from './fault-spec.js';
import type { FaultRule, FaultSpec } from './fault-spec.js';

/** One copy the substrate must deliver to `action.machine` after `delayNs` beyond the pipeline latency. */
export interface Delivery {
  readonly action: UnicastAction;
  readonly delayNs: number;
  /** True for the extra copy a duplication fault made. */
  readonly duplicate: boolean;
}

/** One copy of a packet on its sender's link into the switch: the substrate ingests `packet` after `delayNs`. */
export interface IngressDelivery {
  readonly packet: LockPacket;
  readonly delayNs: number;
  /** True for the extra copy a duplication fault made. */
  readonly duplicate: boolean;
}

/** What ingress rules did to packets on the machines' links into the switch. */
export interface IngressFaultStats {
  /** Packets offered to `applyIngress`. */
  readonly packets: number;
  readonly lost: number;
  readonly duplicated: number;
  readonly delayed: number;
  readonly reordered: number;
  readonly lostByType: Readonly<Partial<Record<PacketType, number>>>;
}

export interface FaultStats {
  /** Copies that left the pipeline (after multicast fan-out and bounces). */
  readonly copies: number;
  readonly lost: number;
  readonly duplicated: number;
  readonly delayed: number;
  readonly reordered: number;
  readonly lostByType: Readonly<Partial<Record<PacketType, number>>>;
  readonly ingress: IngressFaultStats;
}

interface CompiledRule {
  readonly rule: FaultRule;
  readonly types: ReadonlySet<PacketType> | undefined;
  readonly machines: ReadonlySet<NodeId> | undefined;
}

/** Counts of one direction. */
class LinkCounts {
  seen = 0;
  lost = 0;
  duplicated = 0;
  delayed = 0;
  reordered = 0;
  readonly lostByType = new Map<PacketType, number>();
}

/** The fate of one packet or copy under the rules that match it: zero, one or two copies, each with its extra delay. */
interface Fate {
  readonly delayNs: number;
  readonly duplicate: boolean;
}

const UNTOUCHED: readonly Fate[] = [{ delayNs: 0, duplicate: false }];

/**
 * Switch-side fault injection (DESIGN §3.2, §7): loss, duplication, reordering and delay per packet
 * type and per machine, on the switch's egress (`apply`: copies the program sent) or its ingress
 * (`applyIngress`: packets on their way in, before the program). Pure: it neither keeps time nor
 * sends; it says which copies to deliver or ingest and their extra delays, drawing only from the
 * `Random` it was given, so a run replays from its seed. Probabilities of exactly 0 or 1 draw
 * nothing, and a packet no rule matches draws nothing, so an injector without faults — or without
 * ingress rules, on ingress — leaves the shared random stream untouched.
 */
export class FaultInjector {
  private egressRules: readonly CompiledRule[] = [];
  private ingressRules: readonly CompiledRule[] = [];
  private current: FaultSpec = NO_FAULTS;
  private readonly egressCounts = new LinkCounts();
  private readonly ingressCounts = new LinkCounts();

  /** `spec` is validated at run time too, since it usually comes from JSON. */
  constructor(
    private readonly random: Random,
    spec: FaultSpec = NO_FAULTS,
  ) {
    this.setSpec(spec);
  }

  get spec(): FaultSpec {
    return this.current;
  }

  /** True when some rule acts on the ingress links (a substrate may skip `applyIngress` otherwise). */
  get hasIngressRules(): boolean {
    return this.ingressRules.length > 0;
  }

  /** Replaces the rules (validated; throws `ConfigError` and keeps the old rules on a bad spec). */
  setSpec(spec: FaultSpec): void {
    const parsed = parseFaultSpec(spec);
    const compiled = parsed.rules.map((rule) => ({
      rule,
      types: rule.packetTypes ? new Set(rule.packetTypes) : undefined,
      machines: rule.machines ? new Set(rule.machines) : undefined,
    }));
    this.current = parsed;
    this.egressRules = compiled.filter((c) => (c.rule.direction ?? 'egress') !== 'ingress');
    this.ingressRules = compiled.filter((c) => c.rule.direction === 'ingress' || c.rule.direction === 'both');
  }

  /** The deliveries for the egress actions of one packet that entered from `ingressMachine`. */
  apply(actions: readonly EgressAction[], ingressMachine: NodeId): Delivery[] {
    const deliveries: Delivery[] = [];
    for (const copy of expandEgress(actions, ingressMachine)) {
      this.egressCounts.seen++;
      const rules = this.egressRules.filter((c) => matches(c, copy.packet.type, copy.machine));
      for (const fate of this.fate(rules, copy.packet.type, this.egressCounts)) deliveries.push({ action: copy, delayNs: fate.delayNs, duplicate: fate.duplicate });
    }
    return deliveries;
  }

  /**
   * The copies of `packet`, sent by `fromMachine`, that reach the switch's ingress and when: none
   * (lost on the link), one, or two (duplicated), each to be ingested after its `delayNs`. Call it
   * before `Switch.ingest`, then feed each copy's result to `apply` as usual.
   */
  applyIngress(packet: LockPacket, fromMachine: NodeId): IngressDelivery[] {
    this.ingressCounts.seen++;
    if (this.ingressRules.length === 0) return [{ packet, delayNs: 0, duplicate: false }];
    const rules = this.ingressRules.filter((c) => matches(c, packet.type, fromMachine));
    return this.fate(rules, packet.type, this.ingressCounts).map((fate) => ({ packet, delayNs: fate.delayNs, duplicate: fate.duplicate }));
  }

  stats(): FaultStats {
    const e = this.egressCounts;
    const i = this.ingressCounts;
    return {
      copies: e.seen,
      lost: e.lost,
      duplicated: e.duplicated,
      delayed: e.delayed,
      reordered: e.reordered,
      lostByType: Object.fromEntries(e.lostByType),
      ingress: { packets: i.seen, lost: i.lost, duplicated: i.duplicated, delayed: i.delayed, reordered: i.reordered, lostByType: Object.fromEntries(i.lostByType) },
    };
  }

  /** Draws, in a fixed order (loss, delays, duplication, the duplicate's delays), what `rules` do to one packet. */
  private fate(rules: readonly CompiledRule[], type: PacketType, counts: LinkCounts): readonly Fate[] {
    if (rules.length === 0) return UNTOUCHED;
    if (rules.some((c) => this.chance(c.rule.loss))) {
      counts.lost++;
      counts.lostByType.set(type, (counts.lostByType.get(type) ?? 0) + 1);
      return [];
    }
    const fates: Fate[] = [{ delayNs: this.delayFor(rules, counts), duplicate: false }];
    if (rules.some((c) => this.chance(c.rule.duplicate))) {
      counts.duplicated++;
      fates.push({ delayNs: this.delayFor(rules, counts), duplicate: true });
    }
    return fates;
  }

  private delayFor(rules: readonly CompiledRule[], counts: LinkCounts): number {
    let delayNs = 0;
    for (const { rule } of rules) {
      if (this.chance(rule.delay)) {
        counts.delayed++;
        delayNs += this.uniform(rule.delayNsMin ?? 0, rule.delayNsMax ?? 0);
      }
      if (this.chance(rule.reorder)) {
        counts.reordered++;
        delayNs += this.uniform(0, rule.reorderNsMax ?? 0);
      }
    }
    return delayNs;
  }

  private chance(probability: number | undefined): boolean {
    if (probability === undefined || probability <= 0) return false;
    if (probability >= 1) return true;
    return this.random.next() < probability;
  }

  /** Whole ns, uniform in [minNs, maxNs]. */
  private uniform(minNs: number, maxNs: number): number {
    const lo = Math.ceil(minNs);
    const hi = Math.floor(maxNs);
    return hi <= lo ? lo : lo + this.random.int(hi - lo + 1);
  }
}

function matches(compiled: CompiledRule, type: PacketType, machine: NodeId): boolean {
  return (!compiled.types || compiled.types.has(type)) && (!compiled.machines || compiled.machines.has(machine));
}
