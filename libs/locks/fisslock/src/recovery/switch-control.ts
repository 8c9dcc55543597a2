import type { DeciderControl } from './switch-image.js';

/** A switch's admission fence as its Describe reports it (switch-dataplane README "Admission"). */
export interface SwitchAdmissionState {
  readonly open: boolean;
  readonly epoch: bigint;
}

/** What the recovery hook needs of a switch's control plane (live: apps/coordinator GrpcDeciderControl over SwitchControl gRPC; sim: the switch model's registers). */
export interface FissSwitchControl extends DeciderControl {
  /** Describe: the arrays and the admission state; call once before anything else. */
  load(): Promise<void>;
  /** From the last `load`; a switch built before Describe carried it reads as closed at 0. */
  readonly admission: SwitchAdmissionState;
  close(): void;
}

/** Opens the control plane of the switch at `address` (announced on `ctl.switch`). */
export type FissSwitchControlFactory = (address: string) => FissSwitchControl;
