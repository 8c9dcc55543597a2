import { create } from '@bufbuild/protobuf';
import { DescribeSwitchResponseSchema } from '@lockfabric/wire';
import { describe, expect, it } from 'vitest';
import { awaitSwitchAdmission } from './switch-admission.js';

/** A switch control whose Describe reports closed `closedFor` times, then open (never, with Infinity). */
function switchOpeningAfter(closedFor: number) {
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    describe: async () => create(DescribeSwitchResponseSchema, { program: 'netlock', admissionOpen: calls++ >= closedFor, admissionEpoch: 7n }),
  };
}

describe('a live switch-family run waits for the switch to be opened by the coordinator', () => {
  it('returns once Describe reports admission open', async () => {
    const control = switchOpeningAfter(3);
    await awaitSwitchAdmission(control, 10_000);
    expect(control.calls).toBe(4);
  });

  it('fails with a message naming the coordinator when the switch stays closed', async () => {
    await expect(awaitSwitchAdmission(switchOpeningAfter(Number.POSITIVE_INFINITY), 120)).rejects.toThrow(/still closed to stamped packets after 120 ms \(admission epoch 7\): the coordinator has not opened it/);
  });
});
