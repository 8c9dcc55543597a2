import { LockFabricError } from '@lockfabric/ports';

/** Why a switch program was rejected; stable for programs and tests, the message is for people. */
export type SwitchProgramErrorKind =
  /** An allocation does not fit in the stage's stateful memory. */
  | 'capacity'
  /** A packet touched one register array twice. */
  | 'double-access'
  /** A conditional update (or a plain write) was attempted on a 1-bit array. */
  | 'one-bit-conditional'
  /** set/clear on an array wider than 1 bit. */
  | 'not-one-bit'
  /** A packet went back to an earlier stage, or named an unknown stage order. */
  | 'stage-order'
  /** A packet touched an array that does not belong to this switch's pipeline. */
  | 'foreign-array'
  /** An allocation after the program was built. */
  | 'sealed'
  /** A second array or table with a name already taken. */
  | 'duplicate-name'
  /** An array of an unsupported width or length, or a stage that does not exist. */
  | 'bad-array'
  /** An egress action a switch cannot perform (no machines, not a machine id). */
  | 'bad-egress';

/** A switch program broke a rule of the pipeline (DESIGN §3.2); the program is wrong, not the packet. */
export class SwitchProgramError extends LockFabricError {
  readonly code = 'SWITCH_PROGRAM';
  constructor(
    readonly kind: SwitchProgramErrorKind,
    message: string,
  ) {
    super(message);
  }
}

/** A register index outside the array, or a value that does not fit the element width. */
export class RegisterAccessError extends LockFabricError {
  readonly code = 'REGISTER_ACCESS';
  constructor(
    readonly array: string,
    readonly detail: string,
  ) {
    super(`register array '${array}': ${detail}`);
  }
}

/** A control-plane request named something the switch does not have, or conflicts with its state. */
export class SwitchControlError extends LockFabricError {
  readonly code = 'SWITCH_CONTROL';
}
