import { LockFabricError } from '@lockfabric/ports';
import type { FissSwitchControl, FissSwitchControlFactory, SwitchAdmissionState } from '@lockfabric/lock-fisslock';

/** A multi-rack recovery found a rack whose switch never announced its control address: S3 cannot cover it. */
export class MissingRackSwitchError extends LockFabricError {
  readonly code = 'FISS_RACK_SWITCH_MISSING';
  constructor(readonly missing: readonly number[]) {
    super(`fisslock recovery: no control address announced for the switch of rack${missing.length > 1 ? 's' : ''} ${missing.join(', ')}; S3 must write every rack's decider (FissLock §5.4)`);
  }
}

/**
 * The switch control addresses announced on `ctl.switch`, by rack. With one rack the latest
 * announcement wins (as before racks); with several (FissLock §5.4) recovery opens every rack's
 * control plane and S3 writes each (lock-fisslock writeRackImages).
 */
export class AnnouncedSwitches {
  private readonly byRack = new Map<number, string>();
  private latest: string | undefined;

  constructor(readonly racks: number) {}

  /** Records an announcement; true when it changed what is known. */
  record(rack: number, address: string): boolean {
    // several racks announce in turn: only a rack's own address changing is news
    const changed = this.racks > 1 ? this.byRack.get(rack) !== address : this.latest !== address;
    this.byRack.set(rack, address);
    this.latest = address;
    return changed;
  }

  get any(): boolean {
    return this.latest !== undefined;
  }

  /** Every expected rack announced. */
  get complete(): boolean {
    return this.racks <= 1 ? this.any : this.missing().length === 0;
  }

  missing(): number[] {
    return Array.from({ length: this.racks }, (_, r) => r).filter((r) => !this.byRack.has(r));
  }

  /** For logs: the address, or every rack's. */
  label(): string {
    if (this.racks <= 1) return this.latest ?? '';
    return [...this.byRack].sort(([a], [b]) => a - b).map(([rack, address]) => `rack ${rack} ${address}`).join(', ');
  }

  /** The control plane recovery writes: the one switch, or every rack's behind one control. */
  open(factory: FissSwitchControlFactory): FissSwitchControl {
    if (this.racks <= 1) return factory(this.latest as string);
    const missing = this.missing();
    if (missing.length > 0) throw new MissingRackSwitchError(missing);
    return rackedSwitchControl(Array.from({ length: this.racks }, (_, r) => factory(this.byRack.get(r) as string)));
  }
}

/**
 * Every rack's switch control as one: `racks` lists them for S3 (per-rack windows and owned locks);
 * the rest reads rack 0 or acts on all. The admission is open only if every switch is open.
 */
export function rackedSwitchControl(controls: readonly FissSwitchControl[]): FissSwitchControl & { readonly racks: readonly FissSwitchControl[] } {
  const first = controls[0] as FissSwitchControl;
  return {
    racks: controls,
    get arrays() {
      return first.arrays;
    },
    readRegister: (array, index) => first.readRegister(array, index),
    fill: async (array, value) => {
      for (const c of controls) await c.fill(array, value);
    },
    write: async (array, index, values) => {
      for (const c of controls) await c.write(array, index, values);
    },
    load: async () => {
      await Promise.all(controls.map((c) => c.load()));
    },
    get admission(): SwitchAdmissionState {
      const states = controls.map((c) => c.admission);
      return { open: states.every((s) => s.open), epoch: states.reduce((min, s) => (s.epoch < min ? s.epoch : min), states[0]?.epoch ?? 0n) };
    },
    close: () => {
      for (const c of controls) c.close();
    },
  };
}
