import { readFileSync } from 'node:fs';
import { COST_MODELS, PAPER_COST_MODEL, parseCostModel, withOverrides } from '@lockfabric/fabric';
import type { CostModel } from '@lockfabric/fabric';
import { errorMessage } from '@lockfabric/ports';
import type { FlagReader, Options } from './args.js';

/** `--cost-model` for every command that runs on `sim`. */
export const COST_MODEL_FLAGS: Options = { 'cost-model': { type: 'string' } };
/** bench's knobs on top of the model. */
export const COST_KNOB_FLAGS: Options = { 'mn-iops': { type: 'string' }, 'cn-latency-ns': { type: 'string' } };

export const COST_MODEL_HELP = `  --cost-model M           sim: paper (default: NIC IOPS ceilings, FIFO links, lock-manager CPU;
                           docs/cost-model.md) | ideal (no ceilings, the old behaviour) | FILE (JSON)`;

/**
 * The model `--cost-model` names (default `paper`); every problem of a model file goes to
 * `reader.problems`. With `knobs`, `--mn-iops` and `--cn-latency-ns` adjust it.
 */
export function readCostModel(values: Record<string, unknown>, reader: FlagReader, knobs = false): CostModel {
  const raw = values['cost-model'];
  let model: CostModel = PAPER_COST_MODEL;
  if (typeof raw === 'string') {
    const named = COST_MODELS[raw];
    if (named) model = named;
    else model = readModelFile(raw, reader.problems) ?? PAPER_COST_MODEL;
  }
  if (!knobs) return model;
  const mnIops = reader.optionalNumber('mn-iops', { min: 1 });
  const cnLatencyNs = reader.optionalNumber('cn-latency-ns', { min: 0 });
  return withOverrides(model, { ...(mnIops !== undefined ? { mnIops } : {}), ...(cnLatencyNs !== undefined ? { cnLatencyNs } : {}) });
}

function readModelFile(path: string, problems: string[]): CostModel | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    problems.push(`--cost-model: ${JSON.stringify(path)} is not paper, ideal or a readable file (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    return undefined;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    problems.push(`--cost-model ${path}: not JSON (${errorMessage(error)})`);
    return undefined;
  }
  const { model, problems: found } = parseCostModel(json);
  problems.push(...found.map((p) => `--cost-model ${path}: ${p}`));
  return model;
}
