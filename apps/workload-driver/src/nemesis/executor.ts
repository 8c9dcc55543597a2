import type { ChaosOutcome, LocalChaos } from '../chaos/local-chaos.js';
import type { SwitchFaultRequest } from '../chaos/chaos-request.js';
import { isAlive } from '../cluster/process-control.js';
import type { NemesisFault, PlannedFault } from './schedule.js';
import { errorMessage } from '@lockfabric/ports';

/** A fault as it happened: the plan, the times it began and healed (histories' time base), and what was done. */
export interface AppliedFault extends PlannedFault {
  readonly startNs: number;
  readonly endNs: number;
  readonly detail: string;
  /** Set when injecting or healing failed (the run goes on; the fault window may be shorter). */
  readonly error?: string;
}

/**
 * Packet faults of the switch-* kinds, on both links of the switch: enough to matter (every
 * protocol through the switch retransmits), not so much that nothing gets through.
 */
export const SWITCH_PACKET_FAULTS: Readonly<Record<string, Omit<SwitchFaultRequest, 'clear'>>> = {
  'switch-loss': { loss: 0.05, duplicate: 0, reorder: 0, delayNs: 0, direction: 'both' },
  'switch-dup': { loss: 0, duplicate: 0.05, reorder: 0, delayNs: 0, direction: 'both' },
  'switch-reorder': { loss: 0, duplicate: 0, reorder: 0.05, delayNs: 0, direction: 'both' },
  'switch-delay': { loss: 0, duplicate: 0, reorder: 0, delayNs: 50_000, delayMaxNs: 2_000_000, direction: 'both' },
};
const CLEAR: SwitchFaultRequest = { loss: 0, duplicate: 0, reorder: 0, delayNs: 0, clear: true };

/** What a fault needs done to the cluster: LocalChaos on this machine, KubeChaos on Kubernetes. */
export interface FaultActions {
  kill(target: string): Promise<ChaosOutcome>;
  restart(target: string): Promise<ChaosOutcome>;
  pause(target: string): Promise<ChaosOutcome>;
  resume(target: string): Promise<ChaosOutcome>;
  partition(target: string, durationMs: number): Promise<ChaosOutcome>;
  natsRestart(): Promise<ChaosOutcome>;
  switchFaults(target: string, faults: SwitchFaultRequest): Promise<ChaosOutcome>;
}

export interface FaultExecutorDeps {
  readonly chaos: FaultActions;
  readonly nowNs: () => number;
  readonly sleep: (ms: number) => Promise<void>;
}

/**
 * Injects one fault and heals it after its duration: kills are followed by a restart (the node
 * rejoins with a new incarnation), pauses by a resume, partitions heal, switch packet faults are
 * cleared. Restarts are their own window. Never throws: a failed action is recorded in `error`.
 */
export async function applyFault(fault: PlannedFault, deps: FaultExecutorDeps): Promise<AppliedFault> {
  const { chaos } = deps;
  const startNs = deps.nowNs();
  const details: string[] = [];
  let error: string | undefined;
  try {
    for (const step of stepsOf(fault.kind)) {
      if (step === 'wait') await deps.sleep(fault.durationMs);
      else details.push(await act(chaos, step, fault));
    }
  } catch (e) {
    error = errorMessage(e);
  }
  return { ...fault, startNs, endNs: deps.nowNs(), detail: details.join('; '), ...(error !== undefined ? { error } : {}) };
}

type Step = 'kill' | 'restart' | 'pause' | 'resume' | 'partition' | 'nats-restart' | 'switch-faults' | 'switch-clear' | 'wait';

function stepsOf(kind: NemesisFault): Step[] {
  switch (kind) {
    case 'kill':
    case 'coordinator-kill':
      return ['kill', 'wait', 'restart'];
    case 'pause':
      return ['pause', 'wait', 'resume'];
    case 'partition':
      return ['partition'];
    case 'restart':
    case 'memory-restart':
    case 'switch-restart':
      return ['restart'];
    case 'nats-restart':
      return ['nats-restart'];
    default:
      return ['switch-faults', 'wait', 'switch-clear'];
  }
}

async function act(chaos: FaultActions, step: Exclude<Step, 'wait'>, fault: PlannedFault): Promise<string> {
  switch (step) {
    case 'kill':
      return (await chaos.kill(fault.target)).detail;
    case 'restart':
      return (await chaos.restart(fault.target)).detail;
    case 'pause':
      return (await chaos.pause(fault.target)).detail;
    case 'resume':
      return (await chaos.resume(fault.target)).detail;
    case 'partition':
      return (await chaos.partition(fault.target, fault.durationMs)).detail;
    case 'nats-restart':
      return (await chaos.natsRestart()).detail;
    case 'switch-faults':
      return (await chaos.switchFaults(fault.target, { ...SWITCH_PACKET_FAULTS[fault.kind]!, clear: false })).detail;
    case 'switch-clear':
      return (await chaos.switchFaults(fault.target, CLEAR)).detail;
  }
}

/**
 * After the run: every process of the cluster alive and running again (restarted if dead, resumed
 * if stopped) and the switch's packet faults cleared. Returns what it had to do.
 */
export async function healAll(chaos: LocalChaos): Promise<string[]> {
  const done: string[] = [];
  for (const p of chaos.state().processes) {
    if (!isAlive(p.pid)) {
      done.push((await chaos.restart(p.name)).detail);
      continue;
    }
    process.kill(p.pid, 'SIGCONT');
    if (p.role === 'switch') await chaos.switchFaults(p.name, CLEAR).catch(() => undefined);
  }
  return done;
}
