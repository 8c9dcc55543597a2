import { create } from '@bufbuild/protobuf';
import type { DescMessage, DescMethodUnary, MessageShape } from '@bufbuild/protobuf';
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { Logger, MalformedInputCounter } from '@lockfabric/live';
import { guardedServer, rawMethodOf } from '@lockfabric/live';
import { ConfigError, MalformedInputError } from '@lockfabric/ports';
import { RegisterAccessError, SwitchControlError } from '@lockfabric/switch';
import { programFacts } from '@lockfabric/lock-catalog';
import { switchProgramCalls } from '@lockfabric/lock-catalog-control';
import type { Switch, SwitchProgram } from '@lockfabric/switch';
import type { LockPacket, NodeId } from '@lockfabric/ports';
import {
  DescribeSwitchResponseSchema,
  ResetSwitchResponseSchema,
  ReadRegistersResponseSchema,
  RegisterArrayDescriptorSchema,
  SetFaultsResponseSchema,
  SwitchControlService,
  WriteRegistersResponseSchema,
} from '@lockfabric/wire';
import { faultFromWire, faultTargetsRack } from './fault-spec-wire.js';
import { unaryHandler } from '@lockfabric/live';
import type { PacketAdmission } from './admission.js';
import type { SwitchFaults } from './switch-faults.js';

/**
 * Elements per ReadRegisters or WriteRegisters call at most: 256 Ki values of up to 5 varint bytes
 * stay well below grpc-js's default 4 MB message limit. Recovery reads a large array in pages.
 */
export const MAX_REGISTERS_PER_CALL = 262_144;

export interface SwitchControlOptions {
  readonly sw: Switch;
  readonly rack: number;
  readonly faults: SwitchFaults;
  readonly malformed: MalformedInputCounter;
  readonly logger: Logger;
  readonly port: number;
  /** Interface to listen on; all of them by default. */
  readonly host?: string;
  readonly reorderWindowNs?: number;
  /** The loaded program, for the calls it serves itself (the catalog's switchProgramCalls). */
  readonly program?: SwitchProgram;
  /**
   * Sends a packet the control plane made (a program call's grants) out of the switch port of
   * `machine`, as the switch CPU would. Without it, calls that send packets are not served.
   */
  readonly emit?: (machine: NodeId, packet: LockPacket) => void;
  /** The admission fence, reported by Describe: a coordinator that first sees a closed switch recovers it before opening it. */
  readonly admission?: PacketAdmission;
}

export interface SwitchControlServer {
  readonly port: number;
  close(graceMs?: number): Promise<void>;
}

/** The calls every switch serves; the service's other methods are the loaded program's own. */
const GENERIC = new Set(['readRegisters', 'writeRegisters', 'setFaults', 'describe', 'reset']);
const methods = Object.fromEntries(SwitchControlService.methods.map((m) => [m.localName, rawMethodOf(m)]));

/** Control errors a caller can fix map to the status that says so. */
function statusOf(error: unknown): GrpcStatus | undefined {
  if (error instanceof SwitchControlError) return GrpcStatus.NOT_FOUND;
  if (error instanceof RegisterAccessError) return GrpcStatus.OUT_OF_RANGE;
  if (error instanceof ConfigError) return GrpcStatus.INVALID_ARGUMENT;
  return undefined;
}

/** SwitchControlService (DESIGN §3.2 control plane): registers, faults and a description of the program. */
export async function startSwitchControlServer(options: SwitchControlOptions): Promise<SwitchControlServer> {
  const { sw, rack, faults, malformed } = options;
  const unary = { malformed, statusOf };
  const { server, credentials } = guardedServer();
  // A program's own calls (catalog plug-ins); one it does not serve answers NOT_FOUND.
  const programCalls = options.program ? switchProgramCalls({ program: options.program, logger: options.logger, ...(options.emit ? { emit: options.emit } : {}) }) : {};
  const programHandlers = Object.fromEntries(
    SwitchControlService.methods
      .filter((m) => !GENERIC.has(m.localName) && m.methodKind === 'unary')
      .map((m) => [
        m.localName,
        unaryHandler(m as DescMethodUnary, unary, (request) => {
          const served = programCalls[m.localName];
          if (!served) throw new SwitchControlError(`${m.name}: this switch's program '${sw.describe().program}' does not serve it`);
          return served(request) as MessageShape<DescMessage>;
        }),
      ]),
  );
  server.addService(methods, {
    ...programHandlers,
    readRegisters: unaryHandler(SwitchControlService.method.readRegisters, unary, (request) => {
      // count 0 is what an unset field decodes to: read the one element at `index`.
      const count = request.count === 0 ? 1 : request.count;
      if (count > MAX_REGISTERS_PER_CALL) {
        throw new MalformedInputError('grpc SwitchControlService.ReadRegisters', `count ${count} exceeds ${MAX_REGISTERS_PER_CALL} elements per call; read in pages`);
      }
      const values = sw.readRegisters(request.array, request.index, count);
      return create(ReadRegistersResponseSchema, { array: request.array, index: request.index, values: Array.from(values) });
    }),
    writeRegisters: unaryHandler(SwitchControlService.method.writeRegisters, unary, (request) => {
      if (request.values.length > MAX_REGISTERS_PER_CALL) {
        throw new MalformedInputError('grpc SwitchControlService.WriteRegisters', `${request.values.length} values exceed ${MAX_REGISTERS_PER_CALL} elements per call; write in pages`);
      }
      sw.writeRegisters(request.array, request.index, request.values);
      return create(WriteRegistersResponseSchema, { written: request.values.length });
    }),
    setFaults: unaryHandler(SwitchControlService.method.setFaults, unary, (request) => {
      const source = 'grpc SwitchControlService.SetFaults';
      const converted = request.faults.map((spec) => {
        // A call reaches exactly this switch, so a spec naming another one is a caller's mistake.
        if (!faultTargetsRack(spec.target, rack)) throw new MalformedInputError(source, `fault target '${spec.target}' is not this switch (rack ${rack})`);
        return faultFromWire(spec, source, options.reorderWindowNs);
      });
      faults.replace(converted);
      options.logger.info(`faults replaced over gRPC: ${faults.active} rule(s) active`);
      return create(SetFaultsResponseSchema, { active: faults.active });
    }),
    describe: unaryHandler(SwitchControlService.method.describe, unary, () => {
      const description = sw.describe();
      const facts = programFacts(sw.program);
      return create(DescribeSwitchResponseSchema, {
        program: description.program,
        rack,
        arrays: description.arrays.map((array) =>
          create(RegisterArrayDescriptorSchema, { name: array.name, widthBits: array.width, length: array.length, stage: array.stage, sizeBits: BigInt(array.bits) }),
        ),
        registerBytes: BigInt(description.registerBytes),
        stages: description.stages.length,
        decisions: Object.fromEntries(Object.entries(sw.counters().decisions).map(([decision, n]) => [decision, BigInt(n)])),
        admissionOpen: options.admission?.state.open ?? false,
        admissionEpoch: options.admission?.state.epoch ?? 0n,
        lockCount: BigInt(facts.lockCount),
        lockCapacity: BigInt(facts.lockCapacity),
        policy: facts.policy,
      });
    }),
    reset: unaryHandler(SwitchControlService.method.reset, unary, () => {
      // Between runs: a new run's machines restart their sequence numbers and hold no agents.
      sw.restart();
      options.logger.info('switch registers reset over gRPC');
      return create(ResetSwitchResponseSchema, { registerBytes: BigInt(sw.describe().registerBytes) });
    }),
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${options.host ?? '0.0.0.0'}:${options.port}`, credentials, (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  return {
    port,
    close: (graceMs = 2_000) =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => server.forceShutdown(), graceMs);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  };
}
