// The JSON `lockfabric reproduce --json` prints and `--out` writes; `lockfabric report` renders it.
// Field names are a shared contract with the report renderer: change them only together.

export interface ReproduceResult {
  readonly kind: 'reproduce';
  readonly version: 1;
  readonly quick: boolean;
  readonly startedAt: string;
  readonly wallMs: number;
  readonly papers: readonly PaperResult[];
}

export type PaperId = 'fisslock' | 'shiftlock' | 'dslr' | 'declock' | 'alock';

export interface PaperResult {
  readonly paper: PaperId;
  readonly title: string;
  readonly experiments: readonly ExperimentResult[];
}

export interface ExperimentResult {
  /** What `--figure` takes, e.g. "declock-fig12-cs". */
  readonly id: string;
  readonly figure: string;
  readonly title: string;
  readonly params: Readonly<Record<string, string | number | boolean>>;
  readonly x: AxisSpec;
  readonly y: AxisSpec;
  /** Ours: one per protocol or variant. */
  readonly series: readonly Series[];
  /** The paper's reported points, where its text gives them. */
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

export interface Claim {
  readonly id: string;
  readonly text: string;
  /** The paper's ratio or value. */
  readonly paper: number;
  /** Ours, in the same unit. */
  readonly ours: number;
  readonly unit: string;
  readonly sameDirection: boolean;
  /** ours / paper − 1. */
  readonly deviation: number;
  readonly verdict: 'reproduced' | 'same-direction' | 'opposite';
  /** The mechanism we believe when the claim is not reproduced. */
  readonly note?: string;
}
