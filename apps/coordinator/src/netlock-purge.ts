import { create } from '@bufbuild/protobuf';
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { GrpcCallError, UnaryClient } from '@lockfabric/live';
import type { Logger, MalformedInputCounter, Subjects } from '@lockfabric/live';
import type { Clock, NodeId } from '@lockfabric/ports';
import { DescribeSwitchRequestSchema, FissSwitchAnnounceSchema, PurgeNetLockMachineRequestSchema, SwitchControlService, decodeWire } from '@lockfabric/wire';
import type { PurgeNetLockMachineResponse } from '@lockfabric/wire';
import type { RecoveryBook } from './recovery-book.js';

/** What one purge call does: the switch's SwitchControl.PurgeNetLockMachine (a seam for tests). */
export type PurgeCall = (address: string, machine: NodeId) => Promise<PurgeNetLockMachineResponse>;

export interface NetLockPurgeDeps {
  readonly nc: NatsConnection;
  readonly subjects: Subjects;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly recoveries: RecoveryBook;
  readonly malformed: MalformedInputCounter;
  /** Attempts per death while the switch is unknown or unreachable; default 5. */
  readonly maxAttempts?: number;
  /** Between attempts; default 300 ms (a switch announces its address every second). */
  readonly retryDelayMs?: number;
  /** Per call; default 2000 ms. */
  readonly callTimeoutMs?: number;
  readonly purge?: PurgeCall;
}

export interface DeadCompute {
  readonly id: string;
  readonly node: NodeId;
  readonly incarnation: bigint;
}

/** How the purge after one death ended. */
export interface NetLockPurgeOutcome {
  readonly node: NodeId;
  readonly incarnation: bigint;
  readonly outcome: 'purged' | 'not-netlock' | 'no-switch' | 'failed';
  readonly response?: PurgeNetLockMachineResponse;
  /** Detection (the call to `computeDead`) to the switch's answer. */
  readonly tookMs: number;
}

export interface NetLockPurgeTrigger {
  /** A compute node was declared dead: purge its switch-queue entries (once per node incarnation). */
  computeDead(member: DeadCompute): void;
  readonly outcomes: readonly NetLockPurgeOutcome[];
  /** Resolves when every purge queued so far has ended. */
  idle(): Promise<void>;
  close(): void;
}

/**
 * The gRPC purge with one client per switch address, kept open: the channel is connected when the
 * address is announced (one Describe), so the purge after a death does not pay a TCP and HTTP/2
 * handshake on a loaded machine.
 */
class GrpcPurge {
  private client: UnaryClient | undefined;

  constructor(private readonly timeoutMs: number) {}

  /** A (new) switch address: replace the client and connect it in the background. */
  warm(address: string): void {
    if (this.client?.address === address) return;
    this.client?.close();
    this.client = new UnaryClient(address, this.timeoutMs);
    this.client.call(SwitchControlService.method.describe, create(DescribeSwitchRequestSchema)).catch(() => undefined);
  }

  readonly call: PurgeCall = (address, machine) => {
    this.warm(address);
    return (this.client as UnaryClient).call(SwitchControlService.method.purgeNetLockMachine, create(PurgeNetLockMachineRequestSchema, { machine }));
  };

  close(): void {
    this.client?.close();
    this.client = undefined;
  }
}

/**
 * NetLock's compute-failure recovery trigger: the coordinator's failure detector declares a compute
 * node dead → one SwitchControl.PurgeNetLockMachine call to the switch (address from the switch's
 * announcement on `ctl.fiss.switch`), which fences the machine and takes its entries out of every
 * hot-lock queue, granting the waiters behind them. Cold locks are the lock server's business (it
 * acts on the FailureNotice itself). Purges run one at a time; the call is idempotent, so a retry
 * after a lost answer is harmless, and a second death report of the same incarnation is ignored.
 * A switch running another program answers NOT_FOUND: NetLock is not in use, nothing to do.
 */
export function startNetLockPurge(deps: NetLockPurgeDeps): NetLockPurgeTrigger {
  const { nc, subjects, logger } = deps;
  const maxAttempts = deps.maxAttempts ?? 5;
  const retryDelayMs = deps.retryDelayMs ?? 300;
  const grpc = deps.purge ? undefined : new GrpcPurge(deps.callTimeoutMs ?? 2_000);
  const purge = deps.purge ?? (grpc as GrpcPurge).call;
  const outcomes: NetLockPurgeOutcome[] = [];
  /** Node incarnations already handled (bounded: one entry per death, dropped past 1024). */
  const handled = new Set<string>();
  let switchAddress: string | undefined;
  let queue: Promise<void> = Promise.resolve();
  let closed = false;

  const announceSubject = subjects.fissSwitch();
  const subscription: Subscription = nc.subscribe(announceSubject, {
    callback: (error, msg) => {
      if (error) return logger.warn(`coordinator: subscription error on ${announceSubject}: ${error.message}`);
      try {
        const announce = decodeWire(FissSwitchAnnounceSchema, msg.data, announceSubject);
        // The FissLock hook validates and counts a bad address; here it is only not used.
        if (!/^[^\s:]+:\d{1,5}$/.test(announce.controlAddress)) return;
        switchAddress = announce.controlAddress;
        grpc?.warm(switchAddress);
      } catch (decodeError) {
        deps.malformed.record(`${announceSubject} (netlock purge)`, decodeError);
      }
    },
  });

  const finish = (member: DeadCompute, startNs: number, outcome: NetLockPurgeOutcome['outcome'], response?: PurgeNetLockMachineResponse): void => {
    const nowNs = deps.clock.nowNs();
    outcomes.push({ node: member.node, incarnation: member.incarnation, outcome, tookMs: (nowNs - startNs) / 1e6, ...(response ? { response } : {}) });
    if (outcomes.length > 1024) outcomes.shift();
    deps.recoveries.recordSteps('compute', member.id, 'netlock', [], nowNs);
  };

  const run = async (member: DeadCompute, startNs: number): Promise<void> => {
    for (let attempt = 1; attempt <= maxAttempts && !closed; attempt++) {
      const address = switchAddress;
      const last = attempt === maxAttempts;
      if (!address) {
        if (last) {
          logger.info(`netlock purge after compute/${member.id}: no switch control address announced on ${announceSubject}; nothing purged`);
          return finish(member, startNs, 'no-switch');
        }
      } else {
        try {
          const response = await purge(address, member.node);
          const tookMs = (deps.clock.nowNs() - startNs) / 1e6;
          logger.info(
            `netlock purge after compute/${member.id} (node ${member.node}): ${response.removed} switch-queue entr${response.removed === 1 ? 'y' : 'ies'} removed (${response.removedHolders} holding) on ${response.locks.length} hot lock(s), ${response.grants} grant(s) sent${response.wasFenced ? ', already fenced' : ''}; ${tookMs.toFixed(1)} ms after detection`,
          );
          return finish(member, startNs, 'purged', response);
        } catch (error) {
          if (error instanceof GrpcCallError && error.code === GrpcStatus.NOT_FOUND) {
            logger.info(`netlock purge after compute/${member.id}: the switch at ${address} runs no netlock program (${error.details}); nothing to purge`);
            return finish(member, startNs, 'not-netlock');
          }
          logger.warn(`netlock purge after compute/${member.id}, attempt ${attempt}: ${error instanceof Error ? error.message : String(error)}${last ? '; giving up' : `; again in ${retryDelayMs} ms`}`);
          if (last) return finish(member, startNs, 'failed');
        }
      }
      await new Promise((resolve) => setTimeout(resolve, retryDelayMs));
    }
  };

  return {
    computeDead(member) {
      const key = `${member.node}#${member.incarnation}`;
      if (closed || handled.has(key)) return;
      handled.add(key);
      if (handled.size > 1024) handled.delete(handled.values().next().value as string);
      const startNs = deps.clock.nowNs();
      queue = queue.then(() => run(member, startNs)).catch(() => undefined);
    },
    outcomes,
    idle: () => queue,
    close() {
      closed = true;
      subscription.unsubscribe();
      grpc?.close();
    },
  };
}
