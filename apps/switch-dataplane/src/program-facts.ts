import type { SwitchProgram } from '@lockfabric/switch';
import { isFissLockDecider } from '@lockfabric/lock-catalog';

/** What Describe, the metrics and the start line say about the loaded program beyond its registers. */
export interface ProgramFacts {
  /** Locks whose state the program keeps in registers; 0 for a program without per-lock state. */
  readonly lockCount: number;
  /** Most locks the program could keep in this pipeline; 0 for a program without per-lock state. */
  readonly lockCapacity: number;
  /** The grant policy, or '' for a program without one. */
  readonly policy: string;
}

/** Facts of a program that has been built into a switch (the decider knows its capacity only then). */
export function programFacts(program: SwitchProgram): ProgramFacts {
  if (isFissLockDecider(program)) return { lockCount: program.lockCount(), lockCapacity: program.capacity(), policy: program.policy };
  return { lockCount: 0, lockCapacity: 0, policy: '' };
}
