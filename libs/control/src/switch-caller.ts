import type { DescMessage, DescMethodUnary, MessageShape } from '@bufbuild/protobuf';
import { LockFabricError } from '@lockfabric/ports';

/**
 * One switch's SwitchControl service as a protocol's control package calls it (live: a gRPC client
 * the coordinator opens; sim: none). The caller picks the method, so the app that provides the
 * transport never learns which program's calls go over it.
 */
export interface SwitchControlCaller {
  readonly address: string;
  /** Connects ahead of the first call (a switch announced itself); optional. */
  warm?(): void;
  /** Rejects with SwitchProgramAbsentError when the switch's program does not serve `method`. */
  call<I extends DescMessage, O extends DescMessage>(method: DescMethodUnary<I, O>, request: MessageShape<I>): Promise<MessageShape<O>>;
  close(): void;
}

/** Opens the control service of the switch at `address`. */
export type SwitchControlCallerFactory = (address: string) => SwitchControlCaller;

/** The switch runs no program that serves the call (SwitchControl answers NOT_FOUND). */
export class SwitchProgramAbsentError extends LockFabricError {
  readonly code = 'SWITCH_PROGRAM_ABSENT';
  constructor(
    readonly address: string,
    readonly method: string,
    readonly detail: string,
  ) {
    super(`the switch at ${address} has no program serving ${method}: ${detail}`);
  }
}
