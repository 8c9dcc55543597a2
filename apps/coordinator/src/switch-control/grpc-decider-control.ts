import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import type { DescMessage, DescMethod, MessageShape } from '@bufbuild/protobuf';
import { Client } from '@grpc/grpc-js';
import type { ServiceError } from '@grpc/grpc-js';
import { GrpcCallError, clientChannelOptions, clientCredentials, rawMethodOf } from '@lockfabric/live';
import type { SwitchAdmissionState, SwitchProgramControl } from '@lockfabric/lock-catalog-control';
import {
  DescribeSwitchRequestSchema,
  DescribeSwitchResponseSchema,
  ReadRegistersRequestSchema,
  ReadRegistersResponseSchema,
  ResetSwitchRequestSchema,
  ResetSwitchResponseSchema,
  SwitchControlService,
  WriteRegistersRequestSchema,
  WriteRegistersResponseSchema,
} from '@lockfabric/wire';

/** The switch-dataplane's page limit (MAX_REGISTERS_PER_CALL): larger writes go in pages. */
const PAGE = 262_144;

/**
 * S3's view of a live switch: SwitchControl ReadRegisters / WriteRegisters over gRPC. Array
 * lengths come from Describe (a split array is the sum of its `name[k]` parts). `fill` to an
 * array's initial value is one Reset of the whole switch (every register to its initial value, as
 * S0 after a reboot) the first time and free after it, for arrays not written since: paging megabytes of registers through
 * WriteRegisters took seconds while the compute nodes wait. Reset also zeroes every seq window,
 * so callers read what they need of `seq` first (runFissRecovery does) and write it after. Any
 * other fill is written in pages.
 */
export class GrpcDeciderControl implements SwitchProgramControl {
  private readonly client: Client;
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
    private readonly deadlineMs = 10_000,
  ) {
    this.client = new Client(address, clientCredentials(), clientChannelOptions());
  }

  /** Reads the switch's arrays and admission state; call once before the recovery. */
  async load(): Promise<void> {
    const d = await this.call(SwitchControlService.method.describe, DescribeSwitchRequestSchema, create(DescribeSwitchRequestSchema), DescribeSwitchResponseSchema);
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
    const r = await this.call(SwitchControlService.method.readRegisters, ReadRegistersRequestSchema, create(ReadRegistersRequestSchema, { array, index, count: 1 }), ReadRegistersResponseSchema);
    return r.values[0] ?? 0;
  }

  async fill(array: string, value: number): Promise<void> {
    if (value === (this.initialValues[array] ?? 0) && !this.dirty.has(array)) {
      if (this.reset) return;
      await this.call(SwitchControlService.method.reset, ResetSwitchRequestSchema, create(ResetSwitchRequestSchema), ResetSwitchResponseSchema);
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
    await this.call(SwitchControlService.method.writeRegisters, WriteRegistersRequestSchema, create(WriteRegistersRequestSchema, { array, index, values: [...values] }), WriteRegistersResponseSchema);
  }

  close(): void {
    this.client.close();
  }

  private call<I extends DescMessage, O extends DescMessage>(method: DescMethod, input: I, request: MessageShape<I>, output: O): Promise<MessageShape<O>> {
    const raw = rawMethodOf(method);
    return new Promise((resolve, reject) => {
      this.client.makeUnaryRequest(raw.path, raw.requestSerialize, raw.responseDeserialize, toBinary(input, request), { deadline: Date.now() + this.deadlineMs }, (error: ServiceError | null, response?: Uint8Array) => {
        if (error) reject(new GrpcCallError(error.code, error.details, `switch control ${method.name} at ${this.address}: ${error.details || error.message}`));
        else resolve(fromBinary(output, response ?? new Uint8Array()));
      });
    });
  }
}
