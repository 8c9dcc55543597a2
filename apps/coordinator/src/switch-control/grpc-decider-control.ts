import { create } from '@bufbuild/protobuf';
import { UnaryClient } from '@lockfabric/live';
import type { SwitchAdmissionState, SwitchProgramControl } from '@lockfabric/lock-catalog-control';
import { DescribeSwitchRequestSchema, ReadRegistersRequestSchema, ResetSwitchRequestSchema, SwitchControlService, WriteRegistersRequestSchema } from '@lockfabric/wire';

/** The switch-dataplane's page limit (MAX_REGISTERS_PER_CALL): larger writes go in pages. */
const PAGE = 262_144;

/**
 * S3's view of a live switch: SwitchControl ReadRegisters / WriteRegisters over gRPC. Array
 * lengths come from Describe (a split array is the sum of its `name[k]` parts). `fill` to an
 * array's initial value is one Reset of the whole switch (every register to its initial value, as
 * S0 after a reboot) the first time and free after it, for arrays not written since: paging megabytes of registers through
 * WriteRegisters took seconds while the compute nodes wait. Reset also zeroes every seq window,
 * so callers read what they need of `seq` first (runFissRecovery does) and write it after. Any
 * other fill is written in pages. The calls go through the same gRPC client plumbing as every
 * other SwitchControl caller (UnaryClient: process TLS, GrpcCallError naming method and address).
 */
export class GrpcDeciderControl implements SwitchProgramControl {
  private readonly client: UnaryClient;
  private lengths = new Map<string, number>();
  private reset = false;
  /** Arrays written since the reset: a fill of those must really write. */
  private readonly dirty = new Set<string>();
  /** Whole-switch resets done by `fill` (at most one per instance). */
  resets = 0;
  arrays: readonly string[] = [];
  admission: SwitchAdmissionState = { open: false, epoch: 0n };

  /** `initialValues`: the program's registers that reset to something other than 0 (its plug-in says which). */
  constructor(
    readonly address: string,
    private readonly initialValues: Readonly<Record<string, number>>,
    deadlineMs = 10_000,
  ) {
    this.client = new UnaryClient(address, deadlineMs);
  }

  /** Reads the switch's arrays and admission state; call once before the recovery. */
  async load(): Promise<void> {
    const d = await this.client.call(SwitchControlService.method.describe, create(DescribeSwitchRequestSchema));
    const lengths = new Map<string, number>();
    for (const a of d.arrays) {
      const base = a.name.replace(/\[\d+\]$/, '');
      lengths.set(base, (lengths.get(base) ?? 0) + a.length);
    }
    this.lengths = lengths;
    this.arrays = [...lengths.keys()];
    this.admission = { open: d.admissionOpen, epoch: d.admissionEpoch };
  }

  async readRegister(array: string, index: number): Promise<number> {
    const r = await this.client.call(SwitchControlService.method.readRegisters, create(ReadRegistersRequestSchema, { array, index, count: 1 }));
    return r.values[0] ?? 0;
  }

  async fill(array: string, value: number): Promise<void> {
    if (value === (this.initialValues[array] ?? 0) && !this.dirty.has(array)) {
      if (this.reset) return;
      await this.client.call(SwitchControlService.method.reset, create(ResetSwitchRequestSchema));
      this.reset = true;
      this.resets++;
      return;
    }
    const length = this.lengths.get(array) ?? 0;
    for (let start = 0; start < length; start += PAGE) {
      await this.write(array, start, new Array<number>(Math.min(PAGE, length - start)).fill(value));
    }
  }

  async write(array: string, index: number, values: readonly number[]): Promise<void> {
    this.dirty.add(array);
    await this.client.call(SwitchControlService.method.writeRegisters, create(WriteRegistersRequestSchema, { array, index, values: [...values] }));
  }

  close(): void {
    this.client.close();
  }
}
