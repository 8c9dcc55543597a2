import { toBinary } from '@bufbuild/protobuf';
import type { DescMessage, DescMethodUnary, MessageShape } from '@bufbuild/protobuf';
import { Client, status as GrpcStatus } from '@grpc/grpc-js';
import type { ServerUnaryCall, ServiceError, handleUnaryCall, sendUnaryData } from '@grpc/grpc-js';
import { rawMethodOf } from './grpc-raw.js';
import { clientChannelOptions, clientCredentials } from './tls/process-tls.js';
import type { MalformedInputCounter } from './malformed-input.js';
import { LockFabricError, MalformedInputError, errorMessage } from '@lockfabric/ports';
import { decodeWire } from '@lockfabric/wire';

/** A gRPC error whose status and details grpc-js sends as they are. */
export type GrpcError = Error & { code: GrpcStatus; details: string };

export function grpcError(code: GrpcStatus, details: string): GrpcError {
  // grpc-js's own shape (a numeric status `code`), handed to grpc-js and never to a caller: the
  // client side turns the status into a GrpcCallError (code GRPC_CALL).
  return Object.assign(new Error(details), { code, details });
}

export interface UnaryOptions {
  readonly malformed: MalformedInputCounter;
  /** The gRPC status for an error the handler threw; INTERNAL when it returns undefined. */
  readonly statusOf?: (error: unknown) => GrpcStatus | undefined;
}

/**
 * A handler for a raw (bytes in, bytes out) unary method: the request is decoded here, so a frame
 * that is not the method's input message is counted as malformed input and answered with
 * INVALID_ARGUMENT instead of failing inside grpc-js.
 */
export function unaryHandler<I extends DescMessage, O extends DescMessage>(
  method: DescMethodUnary<I, O>,
  options: UnaryOptions,
  handle: (request: MessageShape<I>) => MessageShape<O> | Promise<MessageShape<O>>,
): handleUnaryCall<Uint8Array, Uint8Array> {
  const source = `grpc ${method.parent.name}.${method.name}`;
  return (call: ServerUnaryCall<Uint8Array, Uint8Array>, callback: sendUnaryData<Uint8Array>) => {
    let request: MessageShape<I>;
    try {
      request = decodeWire(method.input, call.request, source);
    } catch (error) {
      options.malformed.record(source, error, call.getPeer());
      callback(grpcError(GrpcStatus.INVALID_ARGUMENT, errorMessage(error)));
      return;
    }
    void (async () => {
      try {
        callback(null, toBinary(method.output, await handle(request)));
      } catch (error) {
        // A request that decodes but asks for nonsense (a probability of 7) is malformed input too.
        if (error instanceof MalformedInputError) options.malformed.record(source, error, call.getPeer());
        const code = error instanceof MalformedInputError ? GrpcStatus.INVALID_ARGUMENT : (options.statusOf?.(error) ?? GrpcStatus.INTERNAL);
        callback(grpcError(code, errorMessage(error)));
      }
    })();
  };
}

/** A unary call that failed: the gRPC `status` and the server's details. */
export class GrpcCallError extends LockFabricError {
  readonly code = 'GRPC_CALL';
  constructor(
    readonly status: GrpcStatus,
    readonly details: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The client side of raw unary methods: encodes with the method's input schema, decodes its
 * output, and fails with a {@link GrpcCallError} naming the service's address and the method.
 */
export class UnaryClient {
  private readonly client: Client;

  constructor(
    readonly address: string,
    private readonly deadlineMs = 30_000,
  ) {
    this.client = new Client(address, clientCredentials(), clientChannelOptions());
  }

  call<I extends DescMessage, O extends DescMessage>(method: DescMethodUnary<I, O>, request: MessageShape<I>, deadlineMs = this.deadlineMs): Promise<MessageShape<O>> {
    const raw = rawMethodOf(method);
    return new Promise((resolve, reject) => {
      this.client.makeUnaryRequest(raw.path, raw.requestSerialize, raw.responseDeserialize, toBinary(method.input, request), { deadline: Date.now() + deadlineMs }, (error: ServiceError | null, response?: Uint8Array) => {
        if (error) {
          reject(new GrpcCallError(error.code, error.details, `${method.parent.name}.${method.name} at ${this.address}: ${error.details || error.message}`));
          return;
        }
        try {
          resolve(decodeWire(method.output, response ?? new Uint8Array(), `grpc ${method.parent.name}.${method.name} from ${this.address}`));
        } catch (decodeError) {
          reject(decodeError);
        }
      });
    });
  }

  close(): void {
    this.client.close();
  }
}
