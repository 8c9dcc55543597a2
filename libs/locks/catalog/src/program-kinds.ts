import { fissLockDecider } from '@lockfabric/lock-fisslock';
import type { FissLockDecider, FissLockPolicy } from '@lockfabric/lock-fisslock';
import { isNetLockProgram, netlockProgram, planQueuesForSwitch } from '@lockfabric/lock-netlock';
import type { NetLockProgram, QueueAllocation, TraceRequest } from '@lockfabric/lock-netlock';
import type { SwitchProgramName } from '@lockfabric/locks-common';
import { forwardProgram } from '@lockfabric/switch';
import type { SwitchProgram } from '@lockfabric/switch';

/** Settings of a program that decides locks in registers (`switch.policy`, `switch.lockCount`, `switch.fallbackNodes`). */
export interface DeciderSettings {
  readonly policy?: FissLockPolicy;
  /** Locks decided on the switch (ids at or above it go to the fallback lock managers). */
  readonly lockCount?: number;
  /** Machines of the fallback lock managers, for out-of-range packets that name no destination. */
  readonly fallbackNodes?: readonly number[];
}

/**
 * One switch program of this build, described by what it can do rather than by its name, so that
 * the switch data plane and the CLI ask these questions instead of comparing program names.
 */
export interface SwitchProgramKind {
  readonly name: SwitchProgramName;
  /** Takes {@link DeciderSettings} (the FissLock decider); any other program refuses them. */
  readonly takesDeciderSettings: boolean;
  /** Lock ids partition over one switch per rack (FissLock §5.4). */
  readonly multiRack: boolean;
  /** The control plane installs its hot-lock queues before a run (NetLock's hot-lock allocation). */
  readonly installsQueues: boolean;
  /**
   * For a program that installs queues: the queues to install for a pre-run trace of the run's
   * workload, sized by the running switch's register arrays (`arrayLength` by array name).
   */
  readonly planQueues?: (trace: readonly TraceRequest[], arrayLength: (name: string) => number) => QueueAllocation[];
  create(settings: DeciderSettings): SwitchProgram;
}

const KINDS: readonly SwitchProgramKind[] = [
  { name: 'forward', takesDeciderSettings: false, multiRack: false, installsQueues: false, create: () => forwardProgram() },
  // Live NetLock starts with no hot-lock queues: the lock server serves every lock until an
  // allocation is installed through the control plane (sim profiles a pre-run trace instead).
  { name: 'netlock', takesDeciderSettings: false, multiRack: false, installsQueues: true, planQueues: planQueuesForSwitch, create: () => netlockProgram() },
  {
    name: 'fisslock',
    takesDeciderSettings: true,
    multiRack: true,
    installsQueues: false,
    // Without a lock count, the decider at its full capacity (1.68 M locks in 12 MAUs).
    create: (s) =>
      fissLockDecider({
        ...(s.policy === undefined ? {} : { policy: s.policy }),
        ...(s.lockCount === undefined ? {} : { lockCount: s.lockCount }),
        ...(s.fallbackNodes === undefined ? {} : { fallbackNodes: s.fallbackNodes }),
      }),
  },
];

/** The program a switch runs when none is named: plain forwarding, no locks in the switch. */
export const DEFAULT_SWITCH_PROGRAM: SwitchProgramName = 'forward';

/** Every switch program this build can load. */
export function switchProgramKinds(): readonly SwitchProgramKind[] {
  return KINDS;
}

/** The program called `name`, or undefined when this build has none by that name. */
export function switchProgramKind(name: string): SwitchProgramKind | undefined {
  return KINDS.find((k) => k.name === name);
}

/** The loaded program is the FissLock decider (Describe reports its capacity and policy). */
export function isFissLockDecider(program: SwitchProgram): program is FissLockDecider {
  return program.name === 'fisslock' && typeof (program as Partial<FissLockDecider>).lockCount === 'function';
}

/** The loaded program is NetLock's (its control plane installs queues and purges machines): lock-netlock's check. */
export { isNetLockProgram };

/** A program whose hot-lock queues the control plane installs and purges (NetLock's). */
export type QueueProgram = Pick<NetLockProgram, 'install' | 'purgeMachine' | 'maxMachines'>;

/** The loaded program's queue control, when it has one (`installsQueues`); undefined otherwise. */
export function queueProgram(program: SwitchProgram): QueueProgram | undefined {
  return isNetLockProgram(program) ? program : undefined;
}

/** What Describe, the metrics and the start line say about the loaded program beyond its registers. */
export interface ProgramFacts {
  /** Locks whose state the program keeps in registers; 0 for a program without per-lock state. */
  readonly lockCount: number;
  /** Most locks the program could keep in this pipeline; 0 for a program without per-lock state. */
  readonly lockCapacity: number;
  /** The grant policy, or '' for a program without one. */
  readonly policy: string;
}

/** Facts of a program that has been built into a switch (a decider knows its capacity only then). */
export function programFacts(program: SwitchProgram): ProgramFacts {
  if (isFissLockDecider(program)) return { lockCount: program.lockCount(), lockCapacity: program.capacity(), policy: program.policy };
  return { lockCount: 0, lockCapacity: 0, policy: '' };
}
