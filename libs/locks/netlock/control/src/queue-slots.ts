/** A hot lock's slots in the switch queue array (NetLock's QueueAllocation, structurally). */
export interface QueueSlots {
  readonly lock: number;
  readonly base: number;
  readonly size: number;
}
