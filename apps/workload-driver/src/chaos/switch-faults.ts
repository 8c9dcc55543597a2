import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { Client } from '@grpc/grpc-js';
import type { ServiceError } from '@grpc/grpc-js';
import { GrpcCallError, clientChannelOptions, clientCredentials, rawMethodOf } from '@lockfabric/live';
import { FaultDirection, FaultSpecSchema, SetFaultsRequestSchema, SetFaultsResponseSchema, SwitchControlService, packetTypes } from '@lockfabric/wire';
import type { SwitchFaultDirection, SwitchFaultRequest } from './chaos-request.js';

const WIRE_DIRECTIONS: Readonly<Record<SwitchFaultDirection, FaultDirection>> = {
  egress: FaultDirection.EGRESS,
  ingress: FaultDirection.INGRESS,
  both: FaultDirection.BOTH,
};

const setFaultsMethod = rawMethodOf(SwitchControlService.method.setFaults);

/** The SetFaults request for a chaos fault request: one spec for every switch it reaches, or none to clear. */
export function setFaultsRequest(faults: SwitchFaultRequest): Uint8Array {
  const specs = faults.clear
    ? []
    : [
        create(FaultSpecSchema, {
          target: '',
          ...(faults.packetType ? { packetType: packetTypes.toWire(faults.packetType) } : {}),
          ...(faults.machine !== undefined ? { machine: faults.machine } : {}),
          loss: faults.loss,
          duplicate: faults.duplicate,
          reorder: faults.reorder,
          delayNs: BigInt(faults.delayNs),
          ...(faults.delayMaxNs === undefined ? {} : { delayMaxNs: BigInt(faults.delayMaxNs) }),
          direction: WIRE_DIRECTIONS[faults.direction ?? 'egress'],
        }),
      ];
  return toBinary(SetFaultsRequestSchema, create(SetFaultsRequestSchema, { faults: specs }));
}

/** Replaces every fault of the switch at `address` (SwitchControl.SetFaults); resolves the rules now active. */
export function applySwitchFaults(address: string, faults: SwitchFaultRequest, timeoutMs = 5_000): Promise<number> {
  const client = new Client(address, clientCredentials(), clientChannelOptions());
  return new Promise<number>((resolve, reject) => {
    client.makeUnaryRequest(
      setFaultsMethod.path,
      setFaultsMethod.requestSerialize,
      setFaultsMethod.responseDeserialize,
      setFaultsRequest(faults),
      { deadline: Date.now() + timeoutMs },
      (error: ServiceError | null, response?: Uint8Array) => {
        if (error) reject(new GrpcCallError(error.code, error.details, `SetFaults on switch ${address}: ${error.details || error.message}`));
        else resolve(fromBinary(SetFaultsResponseSchema, response ?? new Uint8Array()).active);
      },
    );
  }).finally(() => client.close());
}
