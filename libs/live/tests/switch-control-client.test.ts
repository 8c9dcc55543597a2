import { create } from '@bufbuild/protobuf';
import { Server, ServerCredentials, status as GrpcStatus } from '@grpc/grpc-js';
import { SwitchProgramAbsentError } from '@lockfabric/control';
import { LockFabricError } from '@lockfabric/ports';
import { DescribeSwitchResponseSchema, PurgeNetLockMachineRequestSchema, ReadRegistersRequestSchema, ResetSwitchResponseSchema, SwitchControlService } from '@lockfabric/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GrpcCallError, unaryHandler } from '../src/grpc-unary.js';
import { rawMethodOf } from '../src/grpc-raw.js';
import { MalformedInputCounter } from '../src/malformed-input.js';
import { SwitchControlClient } from '../src/switch-control-client.js';
import { memoryLogger } from './support.js';

/** A switch's answer when its program serves no such call (the switch-dataplane's NOT_FOUND). */
class NotServed extends LockFabricError {
  readonly code = 'TEST_NOT_SERVED';
}

const m = SwitchControlService.method;
let server: Server;
let address: string;
let resets = 0;

// A SwitchControl server on a real port: Describe and Reset as a switch-dataplane answers them, a
// program call the running program does not serve (NOT_FOUND), and a register read that fails.
beforeAll(async () => {
  const options = { malformed: new MalformedInputCounter({ logger: memoryLogger() }), statusOf: (e: unknown) => (e instanceof NotServed ? GrpcStatus.NOT_FOUND : undefined) };
  server = new Server();
  server.addService(
    { describe: rawMethodOf(m.describe), reset: rawMethodOf(m.reset), purgeNetLockMachine: rawMethodOf(m.purgeNetLockMachine), readRegisters: rawMethodOf(m.readRegisters) },
    {
      describe: unaryHandler(m.describe, options, () => create(DescribeSwitchResponseSchema, { program: 'forward', admissionOpen: true, admissionEpoch: 4n })),
      reset: unaryHandler(m.reset, options, () => (resets++, create(ResetSwitchResponseSchema))),
      purgeNetLockMachine: unaryHandler(m.purgeNetLockMachine, options, () => {
        throw new NotServed('no NetLock program loaded');
      }),
      readRegisters: unaryHandler(m.readRegisters, options, () => {
        throw new Error('register file unreadable');
      }),
    },
  );
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))));
  address = `127.0.0.1:${port}`;
});

afterAll(() => server?.forceShutdown());

describe('SwitchControlClient over a real gRPC server', () => {
  it('describes and resets the switch; warm connects without a result', async () => {
    const client = new SwitchControlClient(address, 5_000);
    try {
      client.warm();
      expect(await client.describe()).toMatchObject({ program: 'forward', admissionOpen: true, admissionEpoch: 4n });
      await client.reset();
      expect(resets).toBe(1);
    } finally {
      client.close();
    }
  });

  it('turns NOT_FOUND of a program call into SwitchProgramAbsentError with its code', async () => {
    const client = new SwitchControlClient(address, 5_000);
    try {
      const failed = await client.call(m.purgeNetLockMachine, create(PurgeNetLockMachineRequestSchema, { machine: 3 })).catch((error: unknown) => error);
      expect(failed).toBeInstanceOf(SwitchProgramAbsentError);
      expect(failed).toMatchObject({ code: 'SWITCH_PROGRAM_ABSENT', address, method: 'PurgeNetLockMachine', detail: 'no NetLock program loaded' });
    } finally {
      client.close();
    }
  });

  it('passes any other failure on as GrpcCallError naming the method and address', async () => {
    const client = new SwitchControlClient(address, 5_000);
    const unreachable = new SwitchControlClient('127.0.0.1:1', 300);
    try {
      const internal = await client.call(m.readRegisters, create(ReadRegistersRequestSchema, { array: 'x', index: 0, count: 1 })).catch((error: unknown) => error);
      expect(internal).toBeInstanceOf(GrpcCallError);
      expect(internal).toMatchObject({ code: 'GRPC_CALL', status: GrpcStatus.INTERNAL });
      const down = await unreachable.describe().catch((error: unknown) => error);
      expect(down).toBeInstanceOf(GrpcCallError);
      expect((down as GrpcCallError).code).toBe('GRPC_CALL');
      expect((down as Error).message).toContain('SwitchControlService.Describe at 127.0.0.1:1');
      // a program call that never reached a switch is not "absent": the caller must not take it as "not in use"
      expect(await unreachable.call(m.purgeNetLockMachine, create(PurgeNetLockMachineRequestSchema, { machine: 3 })).catch((error: unknown) => error)).not.toBeInstanceOf(SwitchProgramAbsentError);
    } finally {
      client.close();
      unreachable.close();
    }
  });
});
