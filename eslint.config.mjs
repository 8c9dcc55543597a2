import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import nx from '@nx/eslint-plugin';

// Layering (DESIGN §1, STYLE "Tags"): every constraint points downward toward `type:port`.
const depConstraints = [
  { sourceTag: 'type:port', onlyDependOnLibsWithTags: ['type:port'] },
  // The seeded generators: a leaf. Protocols never take it: they draw from the Random port.
  { sourceTag: 'type:random', onlyDependOnLibsWithTags: ['type:port'] },
  // The machine's real-time clock: live processes and the embedded substrate, never a protocol.
  { sourceTag: 'type:realtime', onlyDependOnLibsWithTags: ['type:port'] },
  { sourceTag: 'type:wire', onlyDependOnLibsWithTags: ['type:wire', 'type:port'] },
  { sourceTag: 'type:model', onlyDependOnLibsWithTags: ['type:port', 'type:model'] },
  // A protocol may ship a switch program over the switch model's pipeline API (NetLock).
  { sourceTag: 'type:protocol', onlyDependOnLibsWithTags: ['type:port', 'type:protocol', 'type:switch-model'] },
  { sourceTag: 'type:check', onlyDependOnLibsWithTags: ['type:port'] },
  { sourceTag: 'type:config', onlyDependOnLibsWithTags: ['type:port'] },
  { sourceTag: 'type:telemetry', onlyDependOnLibsWithTags: ['type:port'] },
  { sourceTag: 'type:workload', onlyDependOnLibsWithTags: ['type:port', 'type:random', 'type:check', 'type:protocol', 'type:wire'] },
  { sourceTag: 'type:sim', onlyDependOnLibsWithTags: ['type:port', 'type:model', 'type:random', 'type:realtime'] },
  // The control plane (membership, failure detection, recovery orchestration) is logic over the
  // ControlBus and Clock ports: the live substrate adapts it to NATS, the harness runs it in sim.
  { sourceTag: 'type:control', onlyDependOnLibsWithTags: ['type:port', 'type:wire', 'type:protocol', 'type:control'] },
  { sourceTag: 'type:live', onlyDependOnLibsWithTags: ['type:port', 'type:realtime', 'type:model', 'type:wire', 'type:telemetry', 'type:config', 'type:sim', 'type:live', 'type:control'] },
  // Hosting runs in a live process (compute nodes, and memory nodes for clients beside their table).
  { sourceTag: 'type:host', onlyDependOnLibsWithTags: ['type:port', 'type:realtime', 'type:random', 'type:model', 'type:wire', 'type:check', 'type:workload', 'type:protocol', 'type:application', 'type:live'] },
  { sourceTag: 'type:harness', onlyDependOnLibsWithTags: ['type:port', 'type:random', 'type:sim', 'type:check', 'type:workload', 'type:protocol', 'type:model', 'type:control'] },
  // Run reports render what the checker and the runs produce: histories and verdicts.
  { sourceTag: 'type:report', onlyDependOnLibsWithTags: ['type:port', 'type:check'] },
  // The one nats-server launcher: tests (through testkit) and the CLI's clusters start the server with it.
  { sourceTag: 'type:nats-server', onlyDependOnLibsWithTags: ['type:port'] },
  { sourceTag: 'type:testkit', onlyDependOnLibsWithTags: ['type:port', 'type:config', 'type:nats-server'] },
  // Applications on top of the lock layer (SmallBank over Redis): workloads and ports only.
  { sourceTag: 'type:application', onlyDependOnLibsWithTags: ['type:port', 'type:workload'] },
  { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['*'] },
  { sourceTag: 'type:e2e', onlyDependOnLibsWithTags: ['*'] },
  { sourceTag: 'type:bench', onlyDependOnLibsWithTags: ['*'] },
];

// A bare `throw new Error(…)` (or `throw Error(…)`) in production source.
const bareThrow = {
  selector: "ThrowStatement > :matches(NewExpression, CallExpression)[callee.name='Error']",
  message: 'throw a LockFabricError subclass with a code (libs/ports errors.ts), not a bare Error',
};

// A plain Error as a promise rejection or an abort reason (`reject(new Error(…))`,
// `Promise.reject(…)`, `controller.abort(…)`): what a caller awaits carries a code too.
const bareRejection = {
  selector: "CallExpression:matches([callee.name='reject'], [callee.property.name=/^(reject|abort)$/]) NewExpression[callee.name='Error']",
  message: 'reject or abort with a LockFabricError subclass with a code (libs/ports errors.ts), not a bare Error',
};

// Protocol ids (libs/ports PROTOCOL_IDS) and switch program names as string values in app code.
// Type positions are left alone (a type cannot branch). A catalog test keeps this list equal to
// PROTOCOL_IDS and the switch programs.
export const PROTOCOL_NAME_LITERALS = ['caslock', 'dslr', 'dslr-backoff', 'mcs', 'drtm', 'shiftlock', 'declock', 'declock-cql', 'alock', 'fisslock', 'netlock', 'srvlock', 'parlock', 'redlock', 'rma-rw', 'ncosed', 'sherman', 'rpc', 'traditional', 'traditional-ro', 'forward'];
const protocolIdLiteral = {
  selector: `Literal[value=/^(${PROTOCOL_NAME_LITERALS.join('|')})$/]:not(TSLiteralType > Literal)`,
  message: 'apps and the generic control plane never name a protocol or switch program: ask @lockfabric/lock-catalog (capabilities, switchProgramKind, DEFAULT_* ids) or take a plug-in',
};

// A protocol module named by an import (anything under @lockfabric/lock-* but the catalog).
const protocolModuleByName = {
  regex: '^@lockfabric/lock-(?!catalog(-control)?$)[a-z0-9-]+(/.*)?$',
  message: 'apps, e2e and tools reach a protocol through @lockfabric/lock-catalog (or lock-catalog-control), never by its module name',
};

// A symbol that names a protocol (its definition `dslr`, `FissRecoveryHook`, `readDslrOptions`,
// `isNetLockProgram`, `NETLOCK_FLAG_SWITCH`, ...). Long names match anywhere in an identifier; the
// short ones (mcs, alock, rpc) only as a whole camel-case word, so `dataLock` stays allowed.
const PROTOCOL_WORDS = ['[Ff]iss', 'FISS', '[Dd]slr', 'DSLR', '[Nn]et[Ll]ock', 'NETLOCK', '[Cc]as[Ll]ock', 'CASLOCK', '[Dd]r[Tt][Mm]', 'DRTM', '[Ss]hift[Ll]ock', 'SHIFTLOCK', '[Dd]ec[Ll]ock', 'DECLOCK', '[Ss]rv[Ll]ock', 'SRVLOCK', '[Pp]ar[Ll]ock', 'PARLOCK', '[Rr]ma[Rr]w', 'RMA_RW', '[Ss]herman', 'SHERMAN', '[Nn][Cc]o[Ss][Ee][Dd]', 'NCOSED', '[Tt]raditional', 'TRADITIONAL', '[Rr]ed[Ll]ock', 'REDLOCK'];
const SHORT_PROTOCOL_WORDS = '(?:^(?:mcs|alock|rpc)|(?:Mcs|MCS|ALock|Alock|ALOCK|Rpc|RPC))(?![a-z])';
export const PROTOCOL_SYMBOL_PATTERN = `(?:${PROTOCOL_WORDS.join('|')})|${SHORT_PROTOCOL_WORDS}`;
const protocolSymbolFromCatalog = {
  regex: '^@lockfabric/lock-catalog(-control)?$',
  importNamePattern: PROTOCOL_SYMBOL_PATTERN,
  message: 'apps never name a protocol: start the catalog\'s generic hooks (coordinatorPlugins, computeNodePlugins, tableAdmin, wordAfterDeath, queueProgram, programFacts) instead of a protocol-named export',
};

// The same for the generic control plane: its protocol-named leftovers (the FissLock driver seam)
// are for the catalog's plug-ins, not for apps, which start the control plane and the plug-ins.
const protocolSymbolFromControl = {
  regex: '^@lockfabric/control$',
  importNamePattern: PROTOCOL_SYMBOL_PATTERN,
  message: 'apps never name a protocol: a protocol\'s recovery reaches the control plane through the catalog\'s plug-ins (coordinatorPlugins, coordinatorControlPlane), not a protocol-named export of @lockfabric/control',
};

// A library importing an app.
const libraryImportsApp = {
  regex: '^@lockfabric/(workload-driver|coordinator|compute-node|memory-node|switch-dataplane)(/.*)?$',
  message: 'a library may not import an app',
};

// The generic control plane (libs/control) and the sim's control plane (libs/harness/src/control).
export const GENERIC_CONTROL_FILES = ['libs/control/src/**/*.ts', 'libs/harness/src/control/**/*.ts'];

// Protocol code is pure logic over ports: no transports, no SDKs, no ambient time.
const protocolPurity = {
  'no-restricted-imports': [
    'error',
    {
      patterns: [
        { group: ['@nats-io/*', 'nats'], message: 'protocols reach the network only through ports' },
        { group: ['@grpc/*', '@connectrpc/*'], message: 'protocols reach the network only through ports' },
        { group: ['@opentelemetry/*'], message: 'use the Trace port' },
        { group: ['node:*'], message: 'protocols are runtime-neutral' },
      ],
    },
  ],
  'no-restricted-globals': [
    'error',
    { name: 'setTimeout', message: 'use Clock.sleep' },
    { name: 'setInterval', message: 'use Clock.sleep' },
    { name: 'setImmediate', message: 'use Clock.sleep' },
    { name: 'Date', message: 'use Clock.nowNs' },
    { name: 'performance', message: 'use Clock.nowNs' },
    { name: 'process', message: 'protocols are runtime-neutral' },
  ],
};

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/src/gen/**', '**/src/*/gen/**', '**/.nx/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/src/**/*.ts', '**/tests/**/*.ts'],
    ignores: ['**/*.test.ts', '**/tests/**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      '@nx/enforce-module-boundaries': ['error', { allow: [], depConstraints, enforceBuildableLibDependency: false }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // Tests may also reach the substrates, models and checkers that exercise the code under test,
    // and the in-memory telemetry that collects the spans they assert.
    files: ['**/*.test.ts', '**/tests/**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          allow: [],
          enforceBuildableLibDependency: false,
          depConstraints: depConstraints.map((c) =>
            c.onlyDependOnLibsWithTags.includes('*')
              ? c
              : { ...c, onlyDependOnLibsWithTags: [...c.onlyDependOnLibsWithTags, 'type:sim', 'type:model', 'type:check', 'type:workload', 'type:testkit', 'type:protocol', 'type:harness', 'type:telemetry', 'type:random', 'type:realtime'] },
          ),
        },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // The control plane runs on the sim's virtual clock as well as live: the same purity.
    files: ['libs/locks/*/src/**/*.ts', 'libs/locks/*/control/src/**/*.ts', 'libs/control/src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: protocolPurity,
  },
  {
    // Apps wire the control plane (libs/control) to NATS, gRPC and metrics; they do not handle its
    // messages themselves, so its logic cannot grow a second copy there. The epoch stamp of
    // apps/compute-node has not moved to libs/control yet (listed, not hidden).
    files: ['apps/coordinator/src/**/*.ts', 'apps/compute-node/src/**/*.ts'],
    ignores: ['**/*.test.ts', 'apps/compute-node/src/epoch-stamp.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: '@lockfabric/wire',
              importNames: [
                'HeartbeatSchema',
                'MembershipViewSchema',
                'FailureNoticeSchema',
                'RecoveryPhaseSchema',
                'ResetOrderSchema',
                'QueueRecoveryRequestSchema',
                'QueueRecoveryReplySchema',
                'FissRecoveryRequestSchema',
                'FissRecoveryReplySchema',
                'FissStuckLockSchema',
                'FissSwitchAnnounceSchema',
                'FissSwitchAdmissionSchema',
              ],
              message: 'control-plane messages are handled in libs/control (apps only wire it to NATS, gRPC and metrics)',
            },
          ],
        },
      ],
    },
  },
  {
    // A protocol is one module that apps, live tests and tools reach only through the catalog
    // (libs/locks/catalog, and its control-plane entry libs/locks/catalog/control); a separate rule
    // name so it adds to, rather than replaces, the no-restricted-imports above. No exceptions.
    files: ['apps/**/*.ts', 'e2e/**/*.ts', 'tools/**/*.ts', 'tools/**/*.mjs'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            protocolModuleByName,
          ],
        },
      ],
    },
  },
  {
    // Apps' production source imports no protocol-named symbol from the catalog or the control plane either (issue 14:
    // apps iterate the catalog). Tests of apps may. The module-name pattern is repeated: a later
    // block's options for a rule replace an earlier block's for the files both match.
    files: ['apps/*/src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [protocolModuleByName, protocolSymbolFromCatalog, protocolSymbolFromControl] }] },
  },
  {
    // Libraries never depend on an app (apps wire libraries, not the other way round).
    files: ['libs/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [libraryImportsApp] }] },
  },
  {
    // The generic control plane and the sim's control plane name no protocol either (issue 14): a
    // protocol's recovery reaches them as a plug-in (its rules through the catalog, its drivers and
    // in-process parts from its control package). The app-import pattern is repeated (one options list per file set).
    files: GENERIC_CONTROL_FILES,
    ignores: ['**/*.test.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [libraryImportsApp, protocolModuleByName, protocolSymbolFromCatalog, protocolSymbolFromControl] }] },
  },
  {
    // One error family (libs/ports LockFabricError): what production code throws carries a stable
    // code a caller can branch on. Tests may throw plain errors. No allow-list: nothing needs one.
    files: ['apps/**/*.ts', 'libs/**/*.ts', 'tools/**/*.ts', 'tools/**/*.mjs'],
    ignores: ['**/*.test.ts', '**/tests/**'],
    rules: { 'no-restricted-syntax': ['error', bareThrow, bareRejection] },
  },
  {
    // Apps ask the catalog what a protocol or switch program can do (capabilities, defaults, the
    // program registry) instead of comparing its id. One rule entry per file set: a later block's
    // no-restricted-syntax replaces an earlier one's, so the bare-throw selector is repeated here.
    // Allowed: the papers' experiment tables (which protocols each paper compares is the paper's
    // data, not a branch) and the demo's chosen one-of-each-kind list.
    files: ['apps/*/src/**/*.ts'],
    ignores: ['**/*.test.ts', 'apps/workload-driver/src/reproduce/papers/**', 'apps/workload-driver/src/commands/demo-txn.ts'],
    rules: { 'no-restricted-syntax': ['error', bareThrow, bareRejection, protocolIdLiteral] },
  },
  {
    // Nor does the generic control plane compare protocol ids: a protocol's rule and its clients'
    // queue-recovery group say whether the queue-lock recovery serves it. No exceptions.
    files: GENERIC_CONTROL_FILES,
    ignores: ['**/*.test.ts'],
    rules: { 'no-restricted-syntax': ['error', bareThrow, bareRejection, protocolIdLiteral] },
  },
  {
    // Top-level consumer: e2e drives the built apps (the CLI's library, the coordinator's service
    // API); those imports alone are allowed, every other boundary is checked as everywhere else.
    files: ['e2e/**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        { allow: ['@lockfabric/workload-driver', '@lockfabric/coordinator/service'], depConstraints, enforceBuildableLibDependency: false },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', Buffer: 'readonly' } },
  },
);
