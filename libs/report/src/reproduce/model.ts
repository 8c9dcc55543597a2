/**
 * The result of `lockfabric reproduce`: per paper, per experiment, our series next to the paper's
 * reported points and the claims with their verdicts. The field names are a contract with the
 * command that writes it; `report.json` holds exactly this object.
 */
export interface ReproduceResult {
  readonly kind: 'reproduce';
  readonly version: 1;
  readonly quick: boolean;
  /** ISO time. */
  readonly startedAt: string;
  readonly wallMs: number;
  /** The sim cost model every run was charged with (`paper`, `ideal`, a file's name); absent in older results. */
  readonly costModel?: string;
  readonly papers: readonly PaperResult[];
}

export interface PaperResult {
  readonly paper: 'fisslock' | 'shiftlock' | 'dslr' | 'declock' | 'alock';
  readonly title: string;
  readonly experiments: readonly ExperimentResult[];
}

export interface ExperimentResult {
  /** What `reproduce --figure` takes, e.g. `declock-fig9`. */
  readonly id: string;
  readonly figure: string;
  readonly title: string;
  readonly params: Readonly<Record<string, string | number | boolean>>;
  readonly x: AxisSpec;
  readonly y: AxisSpec;
  /** Ours: one series per protocol or variant. */
  readonly series: readonly Series[];
  /** The paper's reported points; may be empty. */
  readonly paperSeries: readonly Series[];
  readonly claims: readonly Claim[];
  readonly wallMs: number;
}

export interface AxisSpec {
  readonly field: string;
  readonly label: string;
  readonly scale: 'linear' | 'log';
}

export interface Series {
  readonly name: string;
  readonly points: readonly { readonly x: number; readonly y: number }[];
}

export type ClaimVerdict = 'reproduced' | 'same-direction' | 'opposite';

export interface Claim {
  readonly id: string;
  readonly text: string;
  /** The paper's ratio or value, and ours in the same unit. */
  readonly paper: number;
  readonly ours: number;
  readonly unit: string;
  readonly sameDirection: boolean;
  /** ours / paper − 1 (−0.31: 31 % below the paper). */
  readonly deviation: number;
  /** reproduced = same direction and |deviation| ≤ 0.25. */
  readonly verdict: ClaimVerdict;
  /** The mechanism when not reproduced, if known. */
  readonly note?: string;
}
