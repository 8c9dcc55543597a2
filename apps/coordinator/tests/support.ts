// Test-only helpers (not part of the build).
import { Client, credentials } from '@grpc/grpc-js';
import type { ServiceError } from '@grpc/grpc-js';
import { toBuffer } from '@lockfabric/live';
import type { Logger } from '@lockfabric/live';

export { startNatsServer, waitFor, type NatsServerHandle } from '@lockfabric/testkit';

/** A logger that keeps its lines. */
export function memoryLogger(): Logger & { readonly lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    info: (message) => lines.push(`INFO ${message}`),
    warn: (message) => lines.push(`WARN ${message}`),
    error: (message) => lines.push(`ERROR ${message}`),
  };
}

/** Calls a unary method with raw bytes; resolves the response bytes or the gRPC error. */
export function callRaw(address: string, path: string, request: Uint8Array): Promise<{ response?: Uint8Array; error?: ServiceError }> {
  const client = new Client(address, credentials.createInsecure());
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      path,
      toBuffer,
      (bytes: Buffer) => new Uint8Array(bytes),
      request,
      (error, response) => {
        client.close();
        resolve(error ? { error } : response ? { response } : {});
      },
    );
  });
}
