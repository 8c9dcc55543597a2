// The JSON `lockfabric reproduce --json` prints and `--out` writes; `lockfabric report` renders it.
// One definition, the report renderer's (libs/report/src/reproduce/model.ts).
import type { PaperResult } from '@lockfabric/report';

export type { AxisSpec, Claim, ExperimentResult, PaperResult, ReproduceResult, Series } from '@lockfabric/report';

export type PaperId = PaperResult['paper'];
