import type { NodeId, PacketType, Random } from '@lockfabric/ports';
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

export interface FaultStats {
  /** Copies that left the pipeline (after multicast fan-out and bounces). */
  readonly copies: number;
  readonly lost: number;
  readonly duplicated: number;
  readonly delayed: number;
  readonly reordered: number;
  readonly lostByType: Readonly<Partial<Record<PacketType, number>>>;
}

interface CompiledRule {
  readonly rule: FaultRule;
  readonly types: ReadonlySet<PacketType> | undefined;
  readonly machines: ReadonlySet<NodeId> | undefined;
}

/**
 * Switch-side fault injection (DESIGN §3.2, §7): loss, duplication, reordering and delay per packet
 * type and per egress machine. Pure: it neither keeps time nor sends; it turns the egress actions
 * of one packet into the copies to deliver and their extra delays, drawing only from the `Random`
 * it was given, so a run replays from its seed. Probabilities of exactly 0 or 1 draw nothing,
 * so an injector without faults leaves the shared random stream untouched.
 */
export class FaultInjector {
  private compiled: readonly CompiledRule[] = [];
  private current: FaultSpec = NO_FAULTS;
  private copies = 0;
  private lost = 0;
  private duplicated = 0;
  private delayed = 0;
  private reordered = 0;
  private readonly lostByType = new Map<PacketType, number>();

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

  /** Replaces the rules (validated; throws `ConfigError` and keeps the old rules on a bad spec). */
  setSpec(spec: FaultSpec): void {
    const parsed = parseFaultSpec(spec);
    this.current = parsed;
    this.compiled = parsed.rules.map((rule) => ({
      rule,
      types: rule.packetTypes ? new Set(rule.packetTypes) : undefined,
      machines: rule.machines ? new Set(rule.machines) : undefined,
    }));
  }

  /** The deliveries for the egress actions of one packet that entered from `ingressMachine`. */
  apply(actions: readonly EgressAction[], ingressMachine: NodeId): Delivery[] {
    const deliveries: Delivery[] = [];
    for (const copy of expandEgress(actions, ingressMachine)) {
      this.copies++;
      const rules = this.compiled.filter((c) => matches(c, copy));
      if (rules.length === 0) {
        deliveries.push({ action: copy, delayNs: 0, duplicate: false });
        continue;
      }
      if (rules.some((c) => this.chance(c.rule.loss))) {
        this.lost++;
        this.lostByType.set(copy.packet.type, (this.lostByType.get(copy.packet.type) ?? 0) + 1);
        continue;
      }
      deliveries.push({ action: copy, delayNs: this.delayFor(rules), duplicate: false });
      if (rules.some((c) => this.chance(c.rule.duplicate))) {
        this.duplicated++;
        deliveries.push({ action: copy, delayNs: this.delayFor(rules), duplicate: true });
      }
    }
    return deliveries;
  }

  stats(): FaultStats {
    return {
      copies: this.copies,
      lost: this.lost,
      duplicated: this.duplicated,
      delayed: this.delayed,
      reordered: this.reordered,
      lostByType: Object.fromEntries(this.lostByType),
    };
  }

  private delayFor(rules: readonly CompiledRule[]): number {
    let delayNs = 0;
    for (const { rule } of rules) {
      if (this.chance(rule.delay)) {
        this.delayed++;
        delayNs += this.uniform(rule.delayNsMin ?? 0, rule.delayNsMax ?? 0);
      }
      if (this.chance(rule.reorder)) {
        this.reordered++;
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

function matches(compiled: CompiledRule, copy: UnicastAction): boolean {
  return (!compiled.types || compiled.types.has(copy.packet.type)) && (!compiled.machines || compiled.machines.has(copy.machine));
}
