import { ESLint } from 'eslint';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PROTOCOL_IDS } from '@lockfabric/ports';
import { switchProgramKinds } from '../src/index.js';
import { describe, expect, it } from 'vitest';

// Lints planted files (text only, never written) under the repository's own eslint.config.mjs:
// the boundary rules must reject an app naming a protocol module and a library importing an app,
// while an app reaching protocols through the catalog passes.
const root = fileURLToPath(new URL('../../../../', import.meta.url));
const RULE = '@typescript-eslint/no-restricted-imports';

async function restrictedImports(eslint: ESLint, file: string, text: string): Promise<string[]> {
  const [result] = await eslint.lintText(text, { filePath: `${root}${file}` });
  return (result?.messages ?? []).filter((m) => m.ruleId === RULE).map((m) => m.message);
}

describe('module boundaries (lint)', () => {
  it('rejects protocol modules named by apps and apps imported by libraries; allows the catalog', async () => {
    const eslint = new ESLint({ cwd: root });
    const byName = await restrictedImports(eslint, 'apps/compute-node/src/planted.ts', "import { dslr } from '@lockfabric/lock-dslr';\nexport const planted = dslr;\n");
    expect(byName).toHaveLength(1);
    expect(byName[0]).toContain('@lockfabric/lock-catalog');
    const control = await restrictedImports(eslint, 'apps/workload-driver/src/planted.ts', "import { startFissRecoveryHook } from '@lockfabric/lock-fisslock-control';\nexport const planted = startFissRecoveryHook;\n");
    expect(control).toHaveLength(1);
    // live tests and tools are held to the same rule (no exemptions)
    const fromE2e = await restrictedImports(eslint, 'e2e/tests/planted.test.ts', "import type { DeciderControl } from '@lockfabric/lock-fisslock';\nexport type Planted = DeciderControl;\n");
    expect(fromE2e).toHaveLength(1);
    const fromTools = await restrictedImports(eslint, 'tools/bench/planted.ts', "import { fisslock } from '@lockfabric/lock-fisslock';\nexport const planted = fisslock;\n");
    expect(fromTools).toHaveLength(1);
    // live tests and tools may take a protocol's pieces from the catalog by name; apps may not (below)
    const viaCatalog = await restrictedImports(eslint, 'tools/bench/planted.ts', "import { netlockProgram } from '@lockfabric/lock-catalog';\nexport const planted = netlockProgram;\n");
    expect(viaCatalog).toEqual([]);
    const viaControlCatalog = await restrictedImports(eslint, 'e2e/tests/planted.test.ts', "import { startFissRecoveryHook } from '@lockfabric/lock-catalog-control';\nexport const planted = startFissRecoveryHook;\n");
    expect(viaControlCatalog).toEqual([]);
    // e2e may import the two app packages it drives, and no other app
    const boundaries = async (file: string, text: string) => ((await eslint.lintText(text, { filePath: `${root}${file}` }))[0]?.messages ?? []).filter((m) => m.ruleId === '@nx/enforce-module-boundaries').map((m) => m.message);
    expect(await boundaries('e2e/tests/planted.test.ts', "import { runLive } from '@lockfabric/workload-driver';\nexport const planted = runLive;\n")).toEqual([]);
    expect(await boundaries('e2e/tests/planted.test.ts', "import * as node from '@lockfabric/compute-node';\nexport const planted = node;\n")).toEqual(['Imports of apps are forbidden']);
    const libToApp = await restrictedImports(eslint, 'libs/switch/src/planted.ts', "import { main } from '@lockfabric/workload-driver';\nexport const planted = main;\n");
    expect(libToApp).toHaveLength(1);
    expect(libToApp[0]).toContain('may not import an app');
  }, 180_000);

  it('rejects an app importing a protocol-named symbol from the catalog, for every protocol; allows the generic hooks', async () => {
    const eslint = new ESLint({ cwd: root });
    // planted mutants: the named wiring the plug-ins replaced
    const hook = await restrictedImports(eslint, 'apps/coordinator/src/planted.ts', "import { startFissRecoveryHook } from '@lockfabric/lock-catalog-control';\nexport const planted = startFissRecoveryHook;\n");
    expect(hook).toHaveLength(1);
    expect(hook[0]).toContain('coordinatorPlugins');
    const named = "import { drainDslrLock, isNetLockProgram, NETLOCK_FLAG_SWITCH } from '@lockfabric/lock-catalog';\nimport type { FissSwitchControl } from '@lockfabric/lock-catalog-control';\nexport const planted = [drainDslrLock, isNetLockProgram, NETLOCK_FLAG_SWITCH];\nexport type Planted = FissSwitchControl;\n";
    expect(await restrictedImports(eslint, 'apps/compute-node/src/planted.ts', named)).toHaveLength(4);
    // every protocol's definition (`rma-rw` → rmaRw) and an options type of its name (RmaRwOptions)
    for (const id of PROTOCOL_IDS) {
      const camel = id.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
      const pascal = camel.charAt(0).toUpperCase() + camel.slice(1);
      const text = `import { ${camel} } from '@lockfabric/lock-catalog';\nimport type { ${pascal}Options } from '@lockfabric/lock-catalog';\nexport const planted = ${camel};\nexport type Planted = ${pascal}Options;\n`;
      expect(await restrictedImports(eslint, 'apps/workload-driver/src/run/planted.ts', text), id).toHaveLength(2);
    }
    // what passes: the generic hooks, words that merely contain a short id, and apps' tests
    const generic = "import { coordinatorPlugins, computeNodePlugins } from '@lockfabric/lock-catalog-control';\nimport { tableAdmin, wordAfterDeath, queueProgram, programFacts, DEFAULT_PROTOCOL_ID, dataLock, globalLock } from '@lockfabric/lock-catalog';\nexport const planted = [coordinatorPlugins, computeNodePlugins, tableAdmin, wordAfterDeath, queueProgram, programFacts, DEFAULT_PROTOCOL_ID, dataLock, globalLock];\n";
    expect(await restrictedImports(eslint, 'apps/coordinator/src/planted.ts', generic)).toEqual([]);
    expect(await restrictedImports(eslint, 'apps/coordinator/tests/planted.test.ts', "import { startFissRecoveryHook } from '@lockfabric/lock-catalog-control';\nexport const planted = startFissRecoveryHook;\n")).toEqual([]);
    // nor from the generic control plane (planted mutant: the NetLock purge wiring that moved into
    // NetLock's control package, and the FissLock driver seam); its generic exports pass
    const fromControl = "import { NetLockNotInUseError, fissNotDriven } from '@lockfabric/control';\nimport type { NetLockPurgePort } from '@lockfabric/control';\nexport const planted = [NetLockNotInUseError, fissNotDriven];\nexport type Planted = NetLockPurgePort;\n";
    const refused = await restrictedImports(eslint, 'apps/coordinator/src/planted.ts', fromControl);
    expect(refused).toHaveLength(3);
    expect(refused[0]).toContain('coordinatorControlPlane');
    const genericControl = "import { SwitchProgramAbsentError, startControlPlane, BusQueueParticipant } from '@lockfabric/control';\nimport type { SwitchControlCaller, MachineDeathRecoveryFactory } from '@lockfabric/control';\nexport const planted = [SwitchProgramAbsentError, startControlPlane, BusQueueParticipant];\nexport type Planted = [SwitchControlCaller, MachineDeathRecoveryFactory];\n";
    expect(await restrictedImports(eslint, 'apps/coordinator/src/planted.ts', genericControl)).toEqual([]);
    // the module-name rule still holds in app source beside it (one options list per file set)
    expect(await restrictedImports(eslint, 'apps/memory-node/src/planted.ts', "import { caslock } from '@lockfabric/lock-caslock';\nexport const planted = caslock;\n")).toHaveLength(1);
  }, 180_000);

  it('rejects a protocol named in the generic control plane and the sim control plane; the plug-in list outside them may', async () => {
    const eslint = new ESLint({ cwd: root });
    const syntax = async (file: string, text: string) => {
      const [result] = await eslint.lintText(text, { filePath: `${root}${file}` });
      return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-syntax').map((m) => m.message);
    };
    // planted mutants: the FissLock wiring and NetLock purge the sim control plane had, the FissLock driver seam and rule table libs/control had
    const simWiring = "import { startFissRecoveryHook } from '@lockfabric/lock-fisslock-control';\nimport { NetLockNotInUseError } from '@lockfabric/lock-netlock-control';\nexport const planted = [startFissRecoveryHook, NetLockNotInUseError];\n";
    expect(await restrictedImports(eslint, 'libs/harness/src/control/planted.ts', simWiring)).toHaveLength(2);
    const fromCatalog = "import { isNetLockProgram } from '@lockfabric/lock-catalog';\nimport { fisslockPlugins } from '@lockfabric/lock-catalog-control';\nexport const planted = [isNetLockProgram, fisslockPlugins];\n";
    expect(await restrictedImports(eslint, 'libs/control/src/planted.ts', fromCatalog)).toHaveLength(2);
    expect(await restrictedImports(eslint, 'libs/control/src/recovery/planted.ts', "import type { FissSwitchControl } from '@lockfabric/lock-fisslock';\nexport type Planted = FissSwitchControl;\n")).toHaveLength(1);
    expect(await restrictedImports(eslint, 'libs/harness/src/control/planted.ts', "import { fissNotDriven } from '@lockfabric/control';\nexport const planted = fissNotDriven;\n")).toHaveLength(1);
    const table = "export const planted = { 'declock-cql': { mechanism: 'lease' } };\nexport const isQueueLock = (p: string): boolean => p === 'mcs';\n";
    expect(await syntax('libs/control/src/planted.ts', table)).toHaveLength(2);
    // the queue-lock recovery is held to it too (it named the queue locks it served, and was exempt)
    const queueLocks = "export const QUEUE_PROTOCOLS = new Set(['mcs', 'alock']);\n";
    for (const file of ['queue-recovery-hook.ts', 'queue-recovery-responder.ts']) expect(await syntax(`libs/control/src/queue-lock-recovery/${file}`, queueLocks), file).toHaveLength(2);
    expect(await syntax('libs/harness/src/control/planted.ts', "export const planted = (p?: string): boolean => p === 'netlock';\n")).toHaveLength(1);
    // the library-imports-app rule and the bare-throw rule still hold there (one options list per file set)
    expect(await restrictedImports(eslint, 'libs/control/src/planted.ts', "import { main } from '@lockfabric/coordinator';\nexport const planted = main;\n")).toHaveLength(1);
    expect(await syntax('libs/harness/src/control/planted.ts', "export function planted(): never {\n  throw new Error('x');\n}\n")).toHaveLength(1);
    // what passes: generic imports, tests, and the harness's plug-in list outside src/control
    const generic = "import { startControlPlane, rulesFor } from '@lockfabric/control';\nimport type { InProcessControlPlugin, MemberRecoveryDriverFactory } from '@lockfabric/control';\nexport const planted = [startControlPlane, rulesFor];\nexport type Planted = [InProcessControlPlugin, MemberRecoveryDriverFactory];\n";
    expect(await restrictedImports(eslint, 'libs/harness/src/control/planted.ts', generic)).toEqual([]);
    expect(await restrictedImports(eslint, 'libs/harness/src/control/planted.test.ts', "import { protocolById } from '@lockfabric/lock-catalog';\nimport { fissInProcessWiring } from '@lockfabric/lock-fisslock-control';\nexport const planted = [protocolById('fisslock'), fissInProcessWiring];\n")).toEqual([]);
    expect(await restrictedImports(eslint, 'libs/harness/src/planted.ts', "import { fissInProcessWiring } from '@lockfabric/lock-fisslock-control';\nexport const planted = fissInProcessWiring;\n")).toEqual([]);
  }, 180_000);

  it('rejects an app comparing a protocol id or switch program name; the id list matches the catalog', async () => {
    const eslint = new ESLint({ cwd: root });
    const syntax = async (file: string, text: string) => {
      const [result] = await eslint.lintText(text, { filePath: `${root}${file}` });
      return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-syntax').map((m) => m.message);
    };
    // planted mutants: the branches this rule replaced with catalog lookups
    const byId = await syntax('apps/compute-node/src/planted.ts', "export const planted = (protocol: string): boolean => protocol !== 'fisslock';\n");
    expect(byId).toHaveLength(1);
    expect(byId[0]).toContain('lock-catalog');
    expect(await syntax('apps/workload-driver/src/commands/planted.ts', "export const planted = (p?: string): string => p ?? 'forward';\n")).toHaveLength(1);
    expect(await syntax('apps/switch-dataplane/src/planted.ts', "export function planted(p: string): number {\n  switch (p) {\n    case 'netlock':\n      return 1;\n    default:\n      return 0;\n  }\n}\n")).toHaveLength(1);
    expect(await syntax('apps/workload-driver/src/run/planted.ts', "export const planted = { 'dslr-backoff': 1 };\n")).toHaveLength(1);
    // a bare throw in an app is still refused beside it (one no-restricted-syntax entry per file set)
    expect(await syntax('apps/coordinator/src/planted.ts', "export function planted(): never {\n  throw new Error('x');\n}\n")).toHaveLength(1);
    // what passes: type positions, words inside messages, tests, and the papers' experiment tables
    expect(await syntax('apps/coordinator/src/planted.ts', "export type Planted = 'netlock' | 'queue';\nexport const planted = 'only the fisslock program';\n")).toEqual([]);
    expect(await syntax('apps/compute-node/src/planted.test.ts', "export const planted = 'fisslock';\n")).toEqual([]);
    expect(await syntax('apps/workload-driver/src/reproduce/papers/planted.ts', "export const planted = { protocol: 'dslr' };\n")).toEqual([]);
    const config = (await import(pathToFileURL(`${root}eslint.config.mjs`).href)) as { PROTOCOL_NAME_LITERALS: readonly string[] };
    expect([...config.PROTOCOL_NAME_LITERALS].sort()).toEqual([...PROTOCOL_IDS, ...switchProgramKinds().map((k) => k.name)].filter((id, i, all) => all.indexOf(id) === i).sort());
  }, 180_000);
});
