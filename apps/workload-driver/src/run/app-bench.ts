import { BTREE_DEFAULTS, OBJECTSTORE_DEFAULTS, btreeMaxNodes, parseDistribution, validateAppSpec } from '@lockfabric/workloads';
import type { AppSpec, WorkloadSpec } from '@lockfabric/workloads';
import type { FlagReader, Options } from '../cli/args.js';

/** Flags of DecLock's application workloads (`--workload objectstore|btree`). */
export const APP_FLAGS: Options = {
  objects: { type: 'string' },
  'object-bytes': { type: 'string' },
  'get-ratio': { type: 'string' },
  keys: { type: 'string' },
  fanout: { type: 'string' },
  'lookup-ratio': { type: 'string' },
  'insert-ratio': { type: 'string' },
  'btree-max-nodes': { type: 'string' },
  'mutant-skip-lock': { type: 'boolean' },
  'mutant-unlocked-split': { type: 'boolean' },
};

export const APP_WORKLOADS = ['objectstore', 'btree'] as const;

const OBJECTSTORE_FLAGS = ['objects', 'object-bytes', 'get-ratio', 'mutant-skip-lock'];
const BTREE_FLAGS = ['keys', 'fanout', 'lookup-ratio', 'insert-ratio', 'btree-max-nodes', 'mutant-unlocked-split'];
/** Micro and transaction flags an application workload defines itself. */
const NOT_FOR_APPS = ['locks', 'read-ratio', 'lock-ids', 'warehouses', 'colocate-warehouses', 'subscribers', 'txn-think-ns', 'max-attempts', 'mutant-early-release'];
/** DecLock §6 draws objects and keys Zipf 0.99 (Sherman's skewed setting). */
const APP_DISTRIBUTION = 'zipf:0.99';

/** True when `--workload` names an application workload. */
export function isAppWorkload(values: Record<string, unknown>): boolean {
  return (APP_WORKLOADS as readonly string[]).includes(String(values['workload'] ?? ''));
}

/**
 * For `--workload objectstore|btree`: the spec with `application` set, `locks` = objects or tree
 * node slots, and Zipf 0.99 unless `--distribution` says otherwise. For any other workload: the
 * spec unchanged, with a problem for each application flag given. Problems go to `reader.problems`.
 */
export function readAppWorkload(values: Record<string, unknown>, reader: FlagReader, spec: WorkloadSpec): WorkloadSpec {
  const given = (flag: string) => values[flag] !== undefined;
  const kind = String(values['workload'] ?? 'micro');
  if (!isAppWorkload(values)) {
    for (const flag of [...OBJECTSTORE_FLAGS, ...BTREE_FLAGS]) {
      // --mutant-skip-lock is SmallBank's too (smallbank-bench.ts)
      if (flag === 'mutant-skip-lock' && kind === 'smallbank') continue;
      const where = flag === 'mutant-skip-lock' ? 'objectstore or smallbank' : OBJECTSTORE_FLAGS.includes(flag) ? 'objectstore' : 'btree';
      if (given(flag)) reader.problems.push(`--${flag} applies to --workload ${where}`);
    }
    return spec;
  }
  for (const flag of NOT_FOR_APPS) if (given(flag)) reader.problems.push(`--${flag} does not apply to --workload ${kind}; it defines its own locks and modes`);
  for (const flag of kind === 'objectstore' ? BTREE_FLAGS : OBJECTSTORE_FLAGS) if (given(flag)) reader.problems.push(`--${flag} applies to --workload ${kind === 'objectstore' ? 'btree' : 'objectstore'}`);
  const distribution = given('distribution') ? spec.distribution : parseDistribution(APP_DISTRIBUTION);
  let app: AppSpec;
  if (kind === 'objectstore') {
    app = {
      kind,
      objects: reader.number('objects', OBJECTSTORE_DEFAULTS.objects, { integer: true, min: 1 }),
      objectBytes: reader.number('object-bytes', OBJECTSTORE_DEFAULTS.objectBytes, { integer: true, min: 16, max: 1 << 20 }),
      getRatio: reader.number('get-ratio', OBJECTSTORE_DEFAULTS.getRatio, { min: 0, max: 1 }),
      ...(values['mutant-skip-lock'] === true ? { mutantSkipLock: true } : {}),
    };
  } else {
    const maxNodes = reader.optionalNumber('btree-max-nodes', { integer: true, min: 2 });
    app = {
      kind: 'btree',
      keys: reader.number('keys', BTREE_DEFAULTS.keys, { integer: true, min: 1 }),
      fanout: reader.number('fanout', BTREE_DEFAULTS.fanout, { integer: true, min: 4, max: 1024 }),
      lookupRatio: reader.number('lookup-ratio', BTREE_DEFAULTS.lookupRatio, { min: 0, max: 1 }),
      insertRatio: reader.number('insert-ratio', BTREE_DEFAULTS.insertRatio, { min: 0, max: 1 }),
      ...(maxNodes !== undefined ? { maxNodes } : {}),
      ...(values['mutant-unlocked-split'] === true ? { mutantUnlockedSplit: true } : {}),
    };
  }
  const problems = validateAppSpec(app);
  reader.problems.push(...problems.map((p) => `--workload ${kind}: ${p}`));
  if (problems.length > 0) return spec;
  const locks = app.kind === 'objectstore' ? app.objects : btreeMaxNodes(app, spec.operations);
  return { ...spec, locks, distribution, readRatio: 0, application: app };
}
