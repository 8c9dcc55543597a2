/**
 * Timing of the emulated switch, for substrates that charge time (the `sim` cost model, `live`
 * pacing). The pipeline works at line rate: every packet takes the same fixed time and nothing
 * queues inside it, which is what makes the switch's grant time stable (FissLock §2).
 */
export interface SwitchTimingModel {
  /** Ingress to egress through the pipeline, for every packet. */
  readonly pipelineLatencyNs: number;
}

/**
 * 1 µs: a Tofino-class pass (parser, 12 ingress MAUs, traffic manager, egress, deparser) takes a
 * few hundred ns port to port; rounding up to 1 µs also covers MAC and serialization of a small
 * lock packet, and keeps a switch-decided grant in the single-digit-µs range the FissLock paper
 * reports once the two server links add their share.
 */
export const DEFAULT_SWITCH_TIMING: SwitchTimingModel = { pipelineLatencyNs: 1_000 };
