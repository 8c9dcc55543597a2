import type { SwitchControlClient } from '@lockfabric/live';
import { LockFabricError } from '@lockfabric/ports';

/** The coordinator did not open the switch to stamped packets in time (no membership view reached it). */
export class SwitchAdmissionTimeoutError extends LockFabricError {
  readonly code = 'SWITCH_ADMISSION_TIMEOUT';
}

/** How long a run waits for the coordinator to open the switch to stamped packets (its first view is due after k·H). */
export const ADMISSION_TIMEOUT_MS = 30_000;

/** Waits until the switch reports its admission open (switch-dataplane README "Admission"). */
export async function awaitSwitchAdmission(control: Pick<SwitchControlClient, 'describe'>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const described = await control.describe();
    if (described.admissionOpen) return;
    if (Date.now() >= deadline) {
      throw new SwitchAdmissionTimeoutError(`the switch is still closed to stamped packets after ${timeoutMs} ms (admission epoch ${described.admissionEpoch}): the coordinator has not opened it — is it running, and has it published a membership view? (see its log)`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
