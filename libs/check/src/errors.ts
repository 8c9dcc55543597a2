import { LockFabricError } from '@lockfabric/ports';

/** A stored history could not be read: names the source and the 1-based line at fault. */
export class HistoryFormatError extends LockFabricError {
  readonly code = 'HISTORY_FORMAT';
  constructor(
    readonly source: string,
    readonly line: number,
    readonly detail: string,
  ) {
    super(`${source}:${line}: ${detail}`);
  }
}
