import { create } from '@bufbuild/protobuf';
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { ServiceDefinition, UntypedServiceImplementation } from '@grpc/grpc-js';
import { tableAdmin, tableResetProtocolIds } from '@lockfabric/lock-catalog';
import type { TableAdmin } from '@lockfabric/lock-catalog';
import { rawMethodOf, unaryHandler } from '@lockfabric/live';
import type { Logger, MalformedInputCounter } from '@lockfabric/live';
import { ConfigError, FabricAccessError, LockTimeoutError, MalformedInputError, errorMessage } from '@lockfabric/ports';
import type { Clock } from '@lockfabric/ports';
import { DrainLockResponseSchema, LockAdminService, ResetTableResponseSchema } from '@lockfabric/wire';
import type { DrainLockRequest, DrainLockResponse, LockTableTarget, ResetTableRequest, ResetTableResponse } from '@lockfabric/wire';
import { connectLockTable } from './remote-lock-table.js';
import type { RemoteLockTable } from './remote-lock-table.js';

const SOURCE = 'grpc LockAdminService';
const DEFAULT_DRAIN_TIMEOUT_MS = 10_000;

export interface LockAdminEvent {
  readonly action: 'reset-table' | 'drain-lock';
  readonly protocol: string;
  readonly outcome: string;
  readonly tookNs: number;
}

export interface LockAdminDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly malformed: MalformedInputCounter;
  /** Told of every finished operation (metrics, the recovery book). */
  readonly onDone?: (event: LockAdminEvent) => void;
}

/**
 * LockAdminService: the coordinator's planned DSLR maintenance (dslr spec §7.6) — a whole-table reset
 * between runs and a freeze-and-drain of one hot lock during a run — carried out on the memory
 * nodes' lock words over its own queue pairs. One operation at a time: a table reset under a drain
 * would zero a frozen word the drain is still watching.
 */
export class LockAdmin {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: LockAdminDeps) {}

  resetTable(request: ResetTableRequest): Promise<ResetTableResponse> {
    return this.serialized(async () => {
      const target = checkTarget(request.table);
      const startNs = this.deps.clock.nowNs();
      const remote = await this.connect(target);
      try {
        const report = await target.admin.reset(remote.verbs, remote.table, target.options);
        const tookNs = this.deps.clock.nowNs() - startNs;
        this.done({ action: 'reset-table', protocol: target.protocol, outcome: report.notZeroAfter.length === 0 ? 'reset' : 'leaked', tookNs });
        return create(ResetTableResponseSchema, {
          locks: report.locks,
          nonZeroBefore: report.nonZeroBefore,
          conservationViolations: report.conservationViolations.map((v) => ({ lock: v.lock, counters: v.counters })),
          notZeroAfter: [...report.notZeroAfter],
          tookNs: BigInt(tookNs),
        });
      } finally {
        remote.close();
      }
    });
  }

  drainLock(request: DrainLockRequest): Promise<DrainLockResponse> {
    return this.serialized(async () => {
      const target = checkTarget(request.table);
      if (request.lock >= target.lockCount) throw new MalformedInputError(SOURCE, `lock ${request.lock} is outside the table of ${target.lockCount} locks`);
      const remote = await this.connect(target);
      try {
        const report = await target.admin.drain(remote.verbs, remote.table, request.lock, {
          clock: this.deps.clock,
          protocolOptions: target.options,
          timeoutMs: request.timeoutMs === 0 ? DEFAULT_DRAIN_TIMEOUT_MS : request.timeoutMs,
        });
        this.done({ action: 'drain-lock', protocol: target.protocol, outcome: report.outcome, tookNs: report.elapsedNs });
        return create(DrainLockResponseSchema, {
          outcome: report.outcome,
          tookNs: BigInt(report.elapsedNs),
          before: report.before,
          verbs: report.verbs,
        });
      } finally {
        remote.close();
      }
    });
  }

  /** gRPC handlers for `Server.addService`, with the service definition they serve. */
  grpcService(): { definition: ServiceDefinition; handlers: UntypedServiceImplementation } {
    const options = { malformed: this.deps.malformed, statusOf: grpcStatusOf };
    return {
      definition: { resetTable: rawMethodOf(LockAdminService.method.resetTable), drainLock: rawMethodOf(LockAdminService.method.drainLock) },
      handlers: {
        resetTable: unaryHandler(LockAdminService.method.resetTable, options, (r) => this.resetTable(r)),
        drainLock: unaryHandler(LockAdminService.method.drainLock, options, (r) => this.drainLock(r)),
      },
    };
  }

  private connect(target: CheckedTarget): Promise<RemoteLockTable> {
    return connectLockTable(target.memoryNodes, target.admin.entryBytes, target.lockCount, this.deps.logger);
  }

  private done(event: LockAdminEvent): void {
    this.deps.logger.info(`lock admin: ${event.action} of ${event.protocol}: ${event.outcome} in ${(event.tookNs / 1e6).toFixed(1)} ms`);
    this.deps.onDone?.(event);
  }

  private serialized<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }
}

interface CheckedTarget {
  readonly protocol: string;
  readonly memoryNodes: readonly string[];
  readonly lockCount: number;
  readonly options: Readonly<Record<string, string>>;
  readonly admin: TableAdmin;
}

function checkTarget(table: LockTableTarget | undefined): CheckedTarget {
  if (!table) throw new MalformedInputError(SOURCE, 'no lock table given');
  const admin = tableAdmin(table.protocol);
  if (!admin) throw new MalformedInputError(SOURCE, `protocol "${table.protocol}" has no coordinator-driven reset; one of ${tableResetProtocolIds().join(', ')}`);
  if (table.memoryNodes.length === 0) throw new MalformedInputError(SOURCE, 'no memory node addresses given');
  if (table.lockCount === 0) throw new MalformedInputError(SOURCE, 'lock_count must be at least 1');
  try {
    admin.checkOptions(table.options);
  } catch (error) {
    throw new MalformedInputError(SOURCE, errorMessage(error));
  }
  return { protocol: table.protocol, memoryNodes: table.memoryNodes, lockCount: table.lockCount, options: table.options, admin };
}

function grpcStatusOf(error: unknown): GrpcStatus | undefined {
  if (error instanceof LockTimeoutError) return GrpcStatus.DEADLINE_EXCEEDED;
  if (error instanceof FabricAccessError) return GrpcStatus.UNAVAILABLE;
  if (error instanceof ConfigError || error instanceof RangeError) return GrpcStatus.INVALID_ARGUMENT;
  return undefined;
}
