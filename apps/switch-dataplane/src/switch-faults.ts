import type { FaultInjector, FaultRule } from '@lockfabric/switch';
import type { ConvertedFault } from './fault-spec-wire.js';

/**
 * The fault rules of one switch and the two ways they change: `replace` (SwitchControl.SetFaults:
 * the list is the new truth) and `upsert` (one FaultSpec on `ctl.fault.switch`: it replaces the
 * rules with the same selector, and a spec without effect clears that selector). The injector
 * validates every change; a rejected change leaves the previous rules in force.
 */
export class SwitchFaults {
  private entries: readonly { readonly key: string; readonly rule: FaultRule }[] = [];

  constructor(private readonly injector: FaultInjector) {}

  /** Rules in force. */
  get active(): number {
    return this.entries.length;
  }

  rules(): readonly FaultRule[] {
    return this.entries.map((entry) => entry.rule);
  }

  replace(faults: readonly ConvertedFault[]): void {
    this.commit(faults.flatMap((fault) => (fault.rule ? [{ key: fault.key, rule: fault.rule }] : [])));
  }

  upsert(fault: ConvertedFault): void {
    const kept = this.entries.filter((entry) => entry.key !== fault.key);
    this.commit(fault.rule ? [...kept, { key: fault.key, rule: fault.rule }] : kept);
  }

  private commit(entries: readonly { readonly key: string; readonly rule: FaultRule }[]): void {
    this.injector.setSpec({ rules: entries.map((entry) => entry.rule) });
    this.entries = entries;
  }
}
