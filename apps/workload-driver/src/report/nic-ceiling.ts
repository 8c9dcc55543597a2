import type { NicLoad, NicTimingModel } from '@lockfabric/fabric';

/** What the NICs' inbound ceilings did over a sim run (DSLR Fig. 19: use of the NIC's capacity). */
export interface NicCeilingFigures {
  /** Per NIC with a ceiling: the share of it the run used, 0…1 (busy issue time / elapsed). */
  readonly nicUtilisation?: Readonly<Record<string, number>>;
  /** Per NIC: requests that waited for the ceiling. */
  readonly nicThrottled?: Readonly<Record<string, number>>;
}

export function nicCeilingFigures(loads: Readonly<Record<string, NicLoad>>, elapsedNs: number, nic: NicTimingModel): NicCeilingFigures {
  const capped = nic.iopsCap !== undefined || nic.atomicIops !== undefined || nic.readWriteIops !== undefined;
  if (!capped || elapsedNs <= 0) return {};
  const entries = Object.entries(loads).filter(([, l]) => l.busyNs > 0);
  if (entries.length === 0) return {};
  return {
    nicUtilisation: Object.fromEntries(entries.map(([node, l]) => [node, Math.min(1, l.busyNs / elapsedNs)])),
    nicThrottled: Object.fromEntries(entries.map(([node, l]) => [node, l.throttled])),
  };
}
