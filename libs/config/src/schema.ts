import { z } from 'zod';

export const NODE_ROLES = ['memory', 'compute', 'switch', 'coordinator', 'driver'] as const;
export type NodeRole = (typeof NODE_ROLES)[number];

export const TLS_MODES = ['mtls', 'insecure'] as const;

export const SWITCH_PROGRAMS = ['forward', 'fisslock', 'netlock'] as const;
export type SwitchProgramName = (typeof SWITCH_PROGRAMS)[number];

/** Arbitration policies of the fisslock decider (libs/switch FISSLOCK_POLICIES; a switch-dataplane test keeps the two equal). */
export const FISSLOCK_POLICIES = ['read-preferring', 'starvation-prevention', 'write-preferring'] as const;
/** Highest machine id the fisslock decider's 8-bit `mid` register can name (255 is reserved). */
export const MAX_SWITCH_MACHINE_ID = 254;

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const DEFAULT_PORTS = {
  memoryGrpc: 50051,
  computeGrpc: 50052,
  switchGrpc: 50053,
  coordinatorGrpc: 50054,
  computeMemoryGrpc: 50055,
  health: 8080,
} as const;

// Messages say what a user must write; the loader appends the key, the source and what it got.
const POSITIVE_INT = 'expected a positive integer';
const NON_NEGATIVE_INT = 'expected a non-negative integer';
const PORT = 'expected a port number 0-65535 (0 picks a free port)';

const typed = (message: string) => ({ invalid_type_error: message, required_error: 'is required' });
const positiveInt = () => z.number(typed(POSITIVE_INT)).int(POSITIVE_INT).positive(POSITIVE_INT);
const nonNegativeInt = () => z.number(typed(NON_NEGATIVE_INT)).int(NON_NEGATIVE_INT).min(0, NON_NEGATIVE_INT);
const port = () => z.number(typed(PORT)).int(PORT).min(0, PORT).max(65535, PORT);
const oneOf = <T extends [string, ...string[]]>(values: T) =>
  z.enum(values, { errorMap: () => ({ message: `expected one of ${values.join(', ')}` }) });

const NATS_PROTOCOLS = new Set(['nats:', 'tls:', 'ws:', 'wss:']);
const NATS_URLS = 'expected NATS server URLs such as nats://host:4222 (comma-separated)';

function isNatsUrlList(value: string): boolean {
  const urls = value.split(',').map((part) => part.trim());
  return urls.every((url) => {
    try {
      const parsed = new URL(url);
      return NATS_PROTOCOLS.has(parsed.protocol) && parsed.hostname !== '';
    } catch {
      return false;
    }
  });
}

const MACHINE_IDS = `expected a list of machine ids in [0, ${MAX_SWITCH_MACHINE_ID}]`;
const isMachineId = (item: string): boolean => /^\d{1,3}$/.test(item.trim()) && Number(item) <= MAX_SWITCH_MACHINE_ID;

const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):(\d{1,5})$/;
const HOST_PORT_MESSAGE = 'expected host:port with a port 1-65535';
const LEASE_BOUND_MESSAGE = 'expected protocol=ms entries such as dslr=525 (a protocol id and a non-negative number of ms)';
const LEASE_BOUND = /^[a-z][a-z-]*=(\d+(\.\d+)?)$/;

/** `coordinator.leaseBoundsMs` entries (`dslr=525`) as a record; entries were validated by the schema. */
export function parseLeaseBounds(entries: readonly string[] | undefined): Record<string, number> | undefined {
  if (!entries || entries.length === 0) return undefined;
  return Object.fromEntries(entries.map((entry) => {
    const [protocol = '', ms = '0'] = entry.split('=');
    return [protocol, Number(ms)];
  }));
}

/** `coordinator.computeNodes` as node ids; entries were validated by the schema. */
export function parseComputeNodes(entries: readonly string[] | undefined): number[] | undefined {
  return entries?.map(Number);
}

function isHostPort(value: string): boolean {
  const match = HOST_PORT.exec(value);
  if (!match) return false;
  const portNumber = Number(match[2]);
  return portNumber >= 1 && portNumber <= 65535;
}

const CLUSTER_NAME = 'expected a name of letters, digits, - or _ (it becomes a NATS subject token)';

const nodeSchema = z
  .object({
    id: nonNegativeInt().default(0),
    role: oneOf([...NODE_ROLES]),
    rack: nonNegativeInt().default(0),
  })
  .strict();

const sections = {
  cluster: z
    .string(typed(CLUSTER_NAME))
    .regex(/^[A-Za-z0-9_-]+$/, CLUSTER_NAME)
    .default('local'),
  nats: z
    .object({
      url: z.string(typed(NATS_URLS)).refine(isNatsUrlList, NATS_URLS).default('nats://127.0.0.1:4222'),
      /**
       * NKey seed file of this service's NATS identity. Unset: the standard location
       * /etc/lockfabric/nats/nkey.seed when it exists, else the connection carries no credentials.
       */
      seedFile: z.string(typed('expected a file path')).min(1, 'expected a file path').optional(),
      /**
       * PEM CA that signed the NATS server's certificate: set, every connection requires TLS and
       * verifies the server. Unset: /etc/lockfabric/nats/ca.crt when it exists, else plaintext.
       */
      caFile: z.string(typed('expected a file path')).min(1, 'expected a file path').optional(),
    })
    .strict()
    .default({}),
  memory: z
    .object({
      grpcPort: port().default(DEFAULT_PORTS.memoryGrpc),
      lockCount: positiveInt().default(65_536),
      entryBytes: positiveInt()
        .refine((bytes) => bytes % 8 === 0, 'expected a positive multiple of 8 (atomics are 8-byte aligned)')
        .default(8),
      /** Verbs per second the emulated NIC serves; unset means no cap. */
      iopsCap: z.number(typed('expected a positive number')).positive('expected a positive number').finite('expected a positive number').optional(),
      /** Bytes of the application data region (region 2: objects, B+tree nodes); zero-filled, so untouched pages cost nothing. */
      dataBytes: positiveInt().default(64 * 1024 * 1024),
      /**
       * Serves ComputeNodeService for lock clients run on this node, beside its table (ALock's
       * local cohort: CPU access, no verbs); unset means this node hosts no clients.
       */
      clientsGrpcPort: port().optional(),
      /** Lock clients this node hosts at most, with clientsGrpcPort. */
      clients: positiveInt().default(64),
    })
    .strict()
    .default({}),
  compute: z
    .object({
      grpcPort: port().default(DEFAULT_PORTS.computeGrpc),
      /** Serves this node's own registered memory (descriptor slots) to peers' verbs. */
      memoryGrpcPort: port().default(DEFAULT_PORTS.computeMemoryGrpc),
      memoryNodes: z.array(z.string(typed(HOST_PORT_MESSAGE)).refine(isHostPort, HOST_PORT_MESSAGE), typed('expected a list of host:port')).default([]),
      clients: positiveInt().default(8),
    })
    .strict()
    .default({}),
  switch: z
    .object({
      program: oneOf([...SWITCH_PROGRAMS]).default('forward'),
      rack: nonNegativeInt().default(0),
      /** Switches (racks) the FissLock lock ids are partitioned over (§5.4); compute nodes route by it, the coordinator recovers every rack's. */
      racks: positiveInt().max(64, 'at most 64 racks').default(1),
      grpcPort: port().default(DEFAULT_PORTS.switchGrpc),
      // host:port others reach the control API at (announced to the coordinator); default 127.0.0.1:<grpcPort>.
      controlAddress: z.string().min(3).optional(),
      // The fisslock program's settings (other programs reject them: switch-dataplane
      // checkSettingsApply). Unset = the decider's defaults: read-preferring, full capacity.
      policy: oneOf([...FISSLOCK_POLICIES]).optional(),
      /** Locks decided on the switch; ids at or above go to the fallback lock managers. */
      lockCount: positiveInt().optional(),
      /** Machines of the fallback lock managers, for out-of-range packets that name no destination. */
      // Strings from flags and environment (`3,4`); a config file may also give numbers.
      fallbackNodes: z.array(z.preprocess((item) => (typeof item === 'number' ? String(item) : item), z.string(typed(MACHINE_IDS)).refine(isMachineId, MACHINE_IDS)), typed(MACHINE_IDS)).optional(),
    })
    .strict()
    .default({}),
  coordinator: z
    .object({
      heartbeatIntervalMs: positiveInt().default(100),
      missesBeforeSuspect: positiveInt().default(3),
      grpcPort: port().default(DEFAULT_PORTS.coordinatorGrpc),
      /**
       * Lease bounds per protocol for recovery bookkeeping when a deployment's protocol options
       * differ from the defaults (e.g. `dslr=525` for λ = 200 ms): when the coordinator expects a
       * dead holder's locks to be free again, after detection.
       */
      leaseBoundsMs: z.array(z.string(typed(LEASE_BOUND_MESSAGE)).regex(LEASE_BOUND, LEASE_BOUND_MESSAGE), typed('expected a list of protocol=ms')).optional(),
      /**
       * Node ids of the compute nodes the deployment runs (a StatefulSet's replicas, the local
       * cluster's `--compute-nodes`): after a (re)start, one not heard within a detection timeout
       * is declared dead like a silent member, though no view listed it. Unset: only members heard
       * or recalled from a participant's view are watched.
       */
      computeNodes: z
        .array(z.preprocess((item) => (typeof item === 'number' ? String(item) : item), z.string(typed(MACHINE_IDS)).refine(isMachineId, MACHINE_IDS)), typed(MACHINE_IDS))
        .refine((ids) => new Set(ids.map(Number)).size === ids.length, 'expected each compute node id once')
        .optional(),
    })
    .strict()
    .default({}),
  health: z
    .object({
      port: port().default(DEFAULT_PORTS.health),
    })
    .strict()
    .default({}),
  trace: z
    .object({
      /** Head-sampling ratio; unset lets telemetry read OTEL_TRACES_SAMPLER_ARG, then 1. */
      ratio: z.number(typed('expected a ratio between 0 and 1')).min(0, 'expected a ratio between 0 and 1').max(1, 'expected a ratio between 0 and 1').optional(),
      /** Unsampled acquisitions slower than this are still exported. */
      slowMs: z.number(typed('expected a non-negative number of milliseconds')).min(0, 'expected a non-negative number of milliseconds').finite('expected a non-negative number of milliseconds').default(10),
    })
    .strict()
    .default({}),
  log: z
    .object({
      level: oneOf([...LOG_LEVELS]).default('info'),
    })
    .strict()
    .default({}),
  // gRPC transport security (decision record 0007). Files default to <dir>/ca.crt, tls.crt, tls.key.
  tls: z
    .object({
      /** mtls: every gRPC server and client uses the certificates; insecure: plaintext, loudly logged. */
      mode: oneOf([...TLS_MODES]).default('mtls'),
      dir: z.string(typed('expected a directory path')).min(1, 'expected a directory path').default('/etc/lockfabric/tls'),
      ca: z.string(typed('expected a file path')).min(1, 'expected a file path').optional(),
      cert: z.string(typed('expected a file path')).min(1, 'expected a file path').optional(),
      key: z.string(typed('expected a file path')).min(1, 'expected a file path').optional(),
    })
    .strict()
    .default({}),
};

/** The configuration of every service and of the CLI. Every object is strict: unknown keys are errors. */
export const configSchema = z
  .object({
    cluster: sections.cluster,
    nats: sections.nats,
    node: nodeSchema,
    memory: sections.memory,
    compute: sections.compute,
    switch: sections.switch,
    coordinator: sections.coordinator,
    health: sections.health,
    trace: sections.trace,
    log: sections.log,
    tls: sections.tls,
  })
  .strict();

/**
 * What a config file or Kubernetes ConfigMap may contain: the same keys and rules, with the node's
 * role optional because each service supplies its own.
 */
export const configFileSchema = configSchema.extend({
  node: nodeSchema.extend({ role: oneOf([...NODE_ROLES]).optional() }).strict().default({}),
});

export type Config = z.output<typeof configSchema>;
export type ConfigInput = z.input<typeof configSchema>;
export type ConfigFile = z.input<typeof configFileSchema>;
