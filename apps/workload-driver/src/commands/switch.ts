import { ConfigError } from '@lockfabric/ports';
import type { DescribeSwitchResponse } from '@lockfabric/wire';
import { FlagReader, parseCommandArgs } from '../cli/args.js';
import { readClusterState } from '../cluster/local-cluster.js';
import { renderTable } from '../report/table.js';
import { addressOf } from '../run/remote-cluster.js';
import { SwitchControlClient } from '@lockfabric/live';
import { DEFAULT_CLUSTER_DIR } from './context.js';

export const SWITCH_HELP = `lockfabric switch describe — what a running switch-dataplane holds (SwitchControl.Describe)

  Prints the program and its policy, the locks it keeps in registers and the most it could keep
  (fisslock: ids below the lock count are decided on the switch, higher ids go to the fallback lock
  managers), its register memory in bytes, each register array, and the admission fence.

  --switch-at HOST:P     a SwitchControl address instead of the local cluster's switch
  --dir DIR              local cluster whose switch to ask (default ${DEFAULT_CLUSTER_DIR})
  --timeout-ms MS        give up after MS (default 5000)
  --json                 print one JSON object`;

/** Describe's answer as the CLI prints it with --json (bigints as numbers: all fit easily). */
export interface SwitchSummary {
  readonly address: string;
  readonly program: string;
  readonly policy: string;
  readonly rack: number;
  readonly lockCount: number;
  readonly lockCapacity: number;
  readonly registerBytes: number;
  readonly stages: number;
  readonly arrays: readonly { readonly name: string; readonly widthBits: number; readonly length: number; readonly stage: number; readonly bits: number }[];
  readonly admission: { readonly open: boolean; readonly epoch: number };
}

export function summarizeSwitch(address: string, d: DescribeSwitchResponse): SwitchSummary {
  return {
    address,
    program: d.program,
    policy: d.policy,
    rack: d.rack,
    lockCount: Number(d.lockCount),
    lockCapacity: Number(d.lockCapacity),
    registerBytes: Number(d.registerBytes),
    stages: d.stages,
    arrays: d.arrays.map((a) => ({ name: a.name, widthBits: a.widthBits, length: a.length, stage: a.stage, bits: Number(a.sizeBits) })),
    admission: { open: d.admissionOpen, epoch: Number(d.admissionEpoch) },
  };
}

/** The human report: a few lines, then the arrays. */
export function renderSwitchSummary(s: SwitchSummary): string {
  const locks = s.lockCapacity > 0 ? `${s.lockCount} of a capacity of ${s.lockCapacity}` : 'no per-lock state';
  return [
    `switch ${s.address} (rack ${s.rack}): program ${s.program}${s.policy ? ` (${s.policy})` : ''}`,
    `  locks in registers   ${locks}`,
    `  register memory      ${s.registerBytes} bytes (${(s.registerBytes / 1e6).toFixed(2)} MB) in ${s.arrays.length} arrays over ${s.stages} stages`,
    `  admission            ${s.admission.open ? 'open' : 'closed'} at epoch ${s.admission.epoch}`,
    renderTable(
      ['array', 'stage', 'width', 'length', 'bits'],
      s.arrays.map((a) => [a.name, a.stage, a.widthBits, a.length, a.bits]),
    ),
  ].join('\n');
}

export async function switchCommand(argv: readonly string[]): Promise<number> {
  const values = parseCommandArgs('switch', argv, {
    'switch-at': { type: 'string' },
    dir: { type: 'string' },
    'timeout-ms': { type: 'string' },
    json: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  const [action, ...extra] = values['_'] as string[];
  if (values['help'] || !action) return (console.log(SWITCH_HELP), values['help'] ? 0 : 2);
  const reader = new FlagReader(values);
  const timeoutMs = reader.number('timeout-ms', 5_000, { integer: true, min: 1 });
  const problems = [...reader.problems];
  if (action !== 'describe') problems.push(`lockfabric switch: unknown action ${JSON.stringify(action)} (describe)`);
  if (extra.length > 0) problems.push(`lockfabric switch: unexpected arguments: ${extra.join(' ')}`);
  const address = switchAddress(values, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  const client = new SwitchControlClient(address, timeoutMs);
  try {
    const summary = summarizeSwitch(address, await client.describe());
    console.log(values['json'] ? JSON.stringify(summary) : renderSwitchSummary(summary));
    return 0;
  } finally {
    client.close();
  }
}

/** `--switch-at`, else the one switch of the local cluster in `--dir`. */
function switchAddress(values: Record<string, unknown>, problems: string[]): string {
  const at = values['switch-at'];
  if (typeof at === 'string') {
    if (!/^[^\s:]+:\d{1,5}$/.test(at)) problems.push(`--switch-at: expected host:port, got ${JSON.stringify(at)}`);
    return at;
  }
  const dir = typeof values['dir'] === 'string' ? values['dir'] : DEFAULT_CLUSTER_DIR;
  const switches = readClusterState(dir)?.processes.filter((p) => p.role === 'switch' && p.grpc !== undefined) ?? [];
  const only = switches[0];
  if (switches.length !== 1 || !only) {
    problems.push(switches.length === 0 ? `no switch: give --switch-at or start a local cluster in ${dir} (lockfabric cluster up)` : `${switches.length} switches in ${dir}: pick one with --switch-at`);
    return '';
  }
  return addressOf(only, only.grpc);
}
