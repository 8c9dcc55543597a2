import type { ServiceDefinition, UntypedServiceImplementation } from '@grpc/grpc-js';
import { guardedServer, rawMethodOf } from '@lockfabric/live';
import type { MalformedInputCounter } from '@lockfabric/live';
import { CoordinatorService } from '@lockfabric/wire';
import type { StatusResponse } from '@lockfabric/wire';
import { unaryHandler } from '@lockfabric/live';

export interface CoordinatorServerOptions {
  readonly port: number;
  readonly host?: string;
  readonly malformed: MalformedInputCounter;
  /** The answer to Status, built when asked. */
  readonly status: () => StatusResponse;
  /** Further services on the same port (LockAdminService). */
  readonly services?: readonly { readonly definition: ServiceDefinition; readonly handlers: UntypedServiceImplementation }[];
}

export interface CoordinatorServer {
  readonly port: number;
  close(graceMs?: number): Promise<void>;
}

/** CoordinatorService (`Status` reports the cluster, its membership view and recoveries), plus `services`. */
export async function startCoordinatorServer(options: CoordinatorServerOptions): Promise<CoordinatorServer> {
  const { server, credentials } = guardedServer();
  server.addService(
    { status: rawMethodOf(CoordinatorService.method.status) },
    { status: unaryHandler(CoordinatorService.method.status, { malformed: options.malformed }, () => options.status()) },
  );
  for (const service of options.services ?? []) server.addService(service.definition, service.handlers);
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
