import type { HistoryRecorder } from '@lockfabric/check';
import { ClientNameCache, encodeHistoryRunEvent } from './history-encoding.js';

/** Events per HistoryChunk message (about 40 bytes each on the wire: well under gRPC's 4 MiB frame limit). */
export const HISTORY_CHUNK_EVENTS = 8_192;
/**
 * Bytes the run stream may hold unsent before a periodic flush waits for the next tick. The
 * recorder keeps every event anyway (it is the run's history); this bounds what piles up a second
 * time in the stream's buffer when the driver reads slowly.
 */
export const HISTORY_STREAM_HIGH_WATER_BYTES = 4 * 1024 * 1024;

/**
 * Streams a run's history to the driver while the run goes on, so a node that is killed mid-run
 * has delivered everything recorded up to its last flush (the driver reports what it got).
 */
export class HistoryStreamer {
  private sent = 0;
  private readonly names = new ClientNameCache();

  /** `send` gets each chunk as an encoded `RunEvent { history }` message, ready to write. */
  constructor(
    private readonly recorder: HistoryRecorder,
    private readonly send: (runEvent: Uint8Array) => void,
    private readonly buffered: () => number,
    private readonly highWaterBytes = HISTORY_STREAM_HIGH_WATER_BYTES,
  ) {}

  /** Events recorded and sent so far. */
  get sentEvents(): number {
    return this.sent;
  }

  /**
   * Sends the events recorded since the last flush, in chunks, while the stream buffers fewer than
   * `highWaterBytes` (pass Infinity at the end of a run: everything goes).
   */
  flush(highWaterBytes = this.highWaterBytes): void {
    while (this.sent < this.recorder.size && this.buffered() < highWaterBytes) {
      const end = Math.min(this.recorder.size, this.sent + HISTORY_CHUNK_EVENTS);
      this.send(encodeHistoryRunEvent(this.recorder.columns(), this.sent, end, this.names));
      this.sent = end;
    }
  }
}
