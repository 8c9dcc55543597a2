import { create } from '@bufbuild/protobuf';
import { SwitchProgramAbsentError } from '@lockfabric/control';
import type { DeadCompute, DriverContext, MachineDeathRecovery, MachineDeathRecoveryFactory, SwitchControlCaller, SwitchControlCallerFactory } from '@lockfabric/control';
import { LockFabricError, NS_PER_MS, errorMessage } from '@lockfabric/ports';
import type { NodeId } from '@lockfabric/ports';
import { FissSwitchAnnounceSchema, PurgeNetLockMachineRequestSchema, PurgeNetLockMachineResponseSchema, SwitchControlService, decodeWire } from '@lockfabric/wire';
import type { PurgeNetLockMachineResponse } from '@lockfabric/wire';

/** What one purge call does: the switch's SwitchControl.PurgeNetLockMachine. */
export type PurgeCall = (address: string, machine: NodeId) => Promise<PurgeNetLockMachineResponse>;

/**
 * The switch control plane as the purge needs it (live: SwitchControl gRPC in apps/coordinator;
 * sim: the switch model's purge). A switch that runs no netlock program rejects with
 * NetLockNotInUseError.
 */
export interface NetLockPurgePort {
  readonly purge: PurgeCall;
  /** The switch announced `address`: connect ahead of the first purge (optional). */
  warm?(address: string): void;
  close?(): void;
}

/** The switch runs no netlock program (SwitchControl answers NOT_FOUND): nothing to purge. */
export class NetLockNotInUseError extends LockFabricError {
  readonly code = 'NETLOCK_NOT_IN_USE';
  constructor(
    readonly address: string,
    readonly detail: string,
  ) {
    super(`the switch at ${address} runs no netlock program: ${detail}`);
  }
}

/** A purge done by a switch model in the same process (sim): what the data plane's purge reports. */
export type InProcessPurge = (machine: NodeId) => {
  readonly removed: number;
  readonly removedHolders: number;
  readonly locks: readonly number[];
  readonly grants: number;
  readonly wasFenced: boolean;
};

/** The purge port over an in-process switch model: the address is only the announced name. */
export function inProcessPurgePort(purge: InProcessPurge): NetLockPurgePort {
  return {
    purge: async (_address, machine) => {
      const r = purge(machine);
      return create(PurgeNetLockMachineResponseSchema, { removed: r.removed, removedHolders: r.removedHolders, locks: [...r.locks], grants: r.grants, wasFenced: r.wasFenced });
    },
  };
}

/**
 * The purge port over a switch's control service (live: the coordinator's gRPC client): one client
 * per switch address, kept open and connected when the address is announced, so the purge after a
 * death does not pay a handshake on a loaded machine. A switch whose program does not serve
 * PurgeNetLockMachine (NOT_FOUND) becomes NetLockNotInUseError.
 */
export function callerPurgePort(open: SwitchControlCallerFactory): NetLockPurgePort {
  let caller: SwitchControlCaller | undefined;
  const warm = (address: string): SwitchControlCaller => {
    if (caller?.address === address) return caller;
    caller?.close();
    caller = open(address);
    caller.warm?.();
    return caller;
  };
  return {
    warm: (address) => void warm(address),
    purge: async (address, machine) => {
      try {
        return await warm(address).call(SwitchControlService.method.purgeNetLockMachine, create(PurgeNetLockMachineRequestSchema, { machine }));
      } catch (error) {
        if (error instanceof SwitchProgramAbsentError) throw new NetLockNotInUseError(address, error.detail);
        throw error;
      }
    },
    close: () => {
      caller?.close();
      caller = undefined;
    },
  };
}

export interface NetLockPurgeDeps extends DriverContext {
  /** Attempts per death while the switch is unknown or unreachable; default 5. */
  readonly maxAttempts?: number;
  /** Between attempts; default 300 ms (a switch announces its address every second). */
  readonly retryDelayMs?: number;
  /** The switch's control plane: a port, or just the purge call. */
  readonly purge: NetLockPurgePort | PurgeCall;
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

export interface NetLockPurgeTrigger extends MachineDeathRecovery {
  /** A compute node was declared dead: purge its switch-queue entries (once per node incarnation). */
  computeDead(member: DeadCompute): void;
  readonly outcomes: readonly NetLockPurgeOutcome[];
  /** Resolves when every purge queued so far has ended. */
  idle(): Promise<void>;
}

/** The purge as a contribution to the control plane (ControlPlaneDeps.recoveryDrivers). */
export function netlockPurgeRecovery(options: Omit<NetLockPurgeDeps, keyof DriverContext>): MachineDeathRecoveryFactory {
  return (context) => startNetLockPurge({ ...context, ...options });
}

/**
 * NetLock's compute-failure recovery trigger: the coordinator's failure detector declares a compute
 * node dead → one SwitchControl.PurgeNetLockMachine call to the switch (address from the switch's
 * announcement on `ctl.switch`), which fences the machine and takes its entries out of every
 * hot-lock queue, granting the waiters behind them. Cold locks are the lock server's business (it
 * acts on the FailureNotice itself). Purges run one at a time; the call is idempotent, so a retry
 * after a lost answer is harmless, and a second death report of the same incarnation is ignored.
 * A switch running another program answers NOT_FOUND: NetLock is not in use, nothing to do.
 */
export function startNetLockPurge(deps: NetLockPurgeDeps): NetLockPurgeTrigger {
  const { bus, subjects, logger } = deps;
  const maxAttempts = deps.maxAttempts ?? 5;
  const retryDelayMs = deps.retryDelayMs ?? 300;
  const port: NetLockPurgePort = typeof deps.purge === 'function' ? { purge: deps.purge } : deps.purge;
  const stop = new AbortController();
  const outcomes: NetLockPurgeOutcome[] = [];
  /** Node incarnations already handled (bounded: one entry per death, dropped past 1024). */
  const handled = new Set<string>();
  let switchAddress: string | undefined;
  let queue: Promise<void> = Promise.resolve();
  let closed = false;

  const announceSubject = subjects.switchAnnounce();
  const unsubscribe = bus.subscribe(announceSubject, (msg) => {
    try {
      const announce = decodeWire(FissSwitchAnnounceSchema, msg.data, announceSubject);
      // The FissLock hook validates and counts a bad address; here it is only not used.
      if (!/^[^\s:]+:\d{1,5}$/.test(announce.controlAddress)) return;
      switchAddress = announce.controlAddress;
      port.warm?.(switchAddress);
    } catch (decodeError) {
      deps.malformed.record(`${announceSubject} (netlock purge)`, decodeError);
    }
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
          const response = await port.purge(address, member.node);
          const tookMs = (deps.clock.nowNs() - startNs) / 1e6;
          logger.info(
            `netlock purge after compute/${member.id} (node ${member.node}): ${response.removed} switch-queue entr${response.removed === 1 ? 'y' : 'ies'} removed (${response.removedHolders} holding) on ${response.locks.length} hot lock(s), ${response.grants} grant(s) sent${response.wasFenced ? ', already fenced' : ''}; ${tookMs.toFixed(1)} ms after detection`,
          );
          return finish(member, startNs, 'purged', response);
        } catch (error) {
          if (error instanceof NetLockNotInUseError) {
            logger.info(`netlock purge after compute/${member.id}: the switch at ${address} runs no netlock program (${error.detail}); nothing to purge`);
            return finish(member, startNs, 'not-netlock');
          }
          logger.warn(`netlock purge after compute/${member.id}, attempt ${attempt}: ${errorMessage(error)}${last ? '; giving up' : `; again in ${retryDelayMs} ms`}`);
          if (last) return finish(member, startNs, 'failed');
        }
      }
      await deps.clock.sleep(retryDelayMs * NS_PER_MS, stop.signal).catch(() => undefined);
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
      stop.abort();
      unsubscribe();
      port.close?.();
    },
  };
}
