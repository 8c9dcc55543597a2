import { rackOfLock } from '@lockfabric/ports';
import type { NodeId } from '@lockfabric/ports';
import type { FissPolicy } from '../agent-pool.js';
import type { RepairPlan } from './recovery-state.js';
import { DECIDER_ARRAYS, switchImage, writeSwitchImage } from './switch-image.js';
import type { DeciderControl, SwitchImage } from './switch-image.js';

/** The deciders of every rack (FissLock §5.4), in rack order; as a DeciderControl it is rack 0's. */
export interface RackedDeciderControl extends DeciderControl {
  readonly racks: readonly DeciderControl[];
}

/** Every rack's decider behind `control`: its `racks`, or itself alone. */
export function decidersOf(control: DeciderControl): readonly DeciderControl[] {
  const racks = (control as Partial<RackedDeciderControl>).racks;
  return racks && racks.length > 0 ? racks : [control];
}

/**
 * S3 on every rack's switch. Each switch gets the held locks it owns (`rackOfLock`), survivors'
 * windows at 0 and each failed machine's window fenced below the last seq *that* switch accepted
 * from it: a machine numbers its packets per switch (rack-links.ts), so each switch's fence is
 * taken from its own register, as switchImage defines it for one. Returns the registers written
 * and the whole image (every held lock; rack 0's seq windows) for checkRepairPlan.
 */
export async function writeRackImages(control: DeciderControl, plan: RepairPlan, policy: FissPolicy): Promise<{ readonly image: SwitchImage; readonly written: number }> {
  const deciders = decidersOf(control);
  let written = 0;
  let whole: SwitchImage | undefined;
  for (const [rack, decider] of deciders.entries()) {
    const lastSeq = new Map<NodeId, number>();
    for (const m of plan.failed) lastSeq.set(m, await decider.readRegister(DECIDER_ARRAYS.seq, m % 256));
    const image = switchImage(plan, policy, (m) => lastSeq.get(m) ?? 0);
    whole ??= image;
    const own = deciders.length === 1 ? image : { ...image, held: image.held.filter((h) => rackOfLock(h.lid, deciders.length) === rack) };
    written += await writeSwitchImage(decider, own);
  }
  return { image: whole as SwitchImage, written };
}
