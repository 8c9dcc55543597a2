import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@lockfabric/ports';
import { loadConfig } from './load-config.js';
import type { LoadConfigOptions } from './load-config.js';

/** The issues of the ConfigError that loading throws (fails the test if it does not throw). */
function issuesOf(options: LoadConfigOptions): readonly string[] {
  try {
    loadConfig(options);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).issues;
  }
  throw new Error('loadConfig accepted a configuration it should have rejected');
}

const files = (contents: Record<string, string>) => (path: string) => {
  const text = contents[path];
  if (text === undefined) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
  return text;
};

describe('loadConfig', () => {
  it('fills every key from defaults and sets the role', () => {
    expect(loadConfig({ role: 'compute' })).toEqual({
      cluster: 'local',
      nats: { url: 'nats://127.0.0.1:4222' },
      node: { id: 0, role: 'compute', rack: 0 },
      memory: { grpcPort: 50051, lockCount: 65536, entryBytes: 8, dataBytes: 67108864, clients: 64 },
      compute: { grpcPort: 50052, memoryGrpcPort: 50055, memoryNodes: [], clients: 8 },
      switch: { program: 'forward', rack: 0, racks: 1, grpcPort: 50053 },
      coordinator: { heartbeatIntervalMs: 100, missesBeforeSuspect: 3, grpcPort: 50054 },
      health: { port: 8080 },
      trace: { slowMs: 10 },
      log: { level: 'info' },
      tls: { mode: 'mtls', dir: '/etc/lockfabric/tls' },
    });
  });

  describe('precedence: defaults < file < environment < flags', () => {
    const file = JSON.stringify({ cluster: 'from-file', memory: { lockCount: 100, entryBytes: 16 }, compute: { memoryNodes: ['mn-0:50051'] } });
    const readText = files({ 'lf.json': file });

    it('file over defaults', () => {
      const config = loadConfig({ role: 'memory', file: 'lf.json', readText });
      expect([config.cluster, config.memory.lockCount, config.memory.entryBytes, config.compute.memoryNodes]).toEqual(['from-file', 100, 16, ['mn-0:50051']]);
    });

    it('environment over file', () => {
      const config = loadConfig({
        role: 'memory',
        file: 'lf.json',
        readText,
        env: { LOCKFABRIC_CLUSTER: 'from-env', LOCKFABRIC_MEMORY_LOCK_COUNT: '200', LOCKFABRIC_COMPUTE_MEMORY_NODES: 'a:1, b:2', PATH: '/bin' },
      });
      expect([config.cluster, config.memory.lockCount, config.memory.entryBytes, config.compute.memoryNodes]).toEqual(['from-env', 200, 16, ['a:1', 'b:2']]);
    });

    it('flags over environment', () => {
      const config = loadConfig({
        role: 'memory',
        file: 'lf.json',
        readText,
        env: { LOCKFABRIC_CLUSTER: 'from-env', LOCKFABRIC_MEMORY_LOCK_COUNT: '200' },
        argv: ['--cluster=from-flag', '--memory.lock-count', '300', '--compute.memory-nodes', 'c:3', '--compute.memory-nodes=d:4,e:5'],
      });
      expect([config.cluster, config.memory.lockCount, config.memory.entryBytes, config.compute.memoryNodes]).toEqual(['from-flag', 300, 16, ['c:3', 'd:4', 'e:5']]);
    });

    it('picks the file from --config, then the file option, then LOCKFABRIC_CONFIG', () => {
      const readAll = files({ 'a.json': '{"cluster":"a"}', 'b.json': '{"cluster":"b"}', 'c.json': '{"cluster":"c"}' });
      const env = { LOCKFABRIC_CONFIG: 'c.json' };
      expect(loadConfig({ role: 'driver', argv: ['--config', 'a.json'], file: 'b.json', env, readText: readAll }).cluster).toBe('a');
      expect(loadConfig({ role: 'driver', file: 'b.json', env, readText: readAll }).cluster).toBe('b');
      expect(loadConfig({ role: 'driver', env, readText: readAll }).cluster).toBe('c');
    });

    it('treats an empty variable as unset', () => {
      expect(loadConfig({ role: 'switch', env: { LOCKFABRIC_CLUSTER: '  ' } }).cluster).toBe('local');
    });

    it('accepts the role when a source repeats it, and optional keys when given', () => {
      const config = loadConfig({ role: 'switch', env: { LOCKFABRIC_NODE_ROLE: 'switch', LOCKFABRIC_TRACE_RATIO: '0.1', LOCKFABRIC_MEMORY_IOPS_CAP: '2e6' } });
      expect([config.node.role, config.trace.ratio, config.memory.iopsCap]).toEqual(['switch', 0.1, 2_000_000]);
    });
  });

  it('reads a real JSON file from disk', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lf-config-'));
    try {
      const path = join(dir, 'config.json');
      writeFileSync(path, JSON.stringify({ switch: { program: 'fisslock', rack: 2 } }));
      const config = loadConfig({ role: 'switch', argv: [`--config=${path}`] });
      expect(config.switch).toEqual({ program: 'fisslock', rack: 2, racks: 1, grpcPort: 50053 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads the fisslock program settings from a file (numbers or strings), the environment and flags', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lf-config-'));
    try {
      const path = join(dir, 'switch.json');
      writeFileSync(path, JSON.stringify({ switch: { program: 'fisslock', policy: 'write-preferring', lockCount: 1_000_000, fallbackNodes: [3, '4'] } }));
      expect(loadConfig({ role: 'switch', argv: [`--config=${path}`] }).switch).toEqual({
        program: 'fisslock', rack: 0, racks: 1, grpcPort: 50053, policy: 'write-preferring', lockCount: 1_000_000, fallbackNodes: ['3', '4'],
      });
      const overridden = loadConfig({ role: 'switch', argv: [`--config=${path}`, '--switch.lock-count=5'], env: { LOCKFABRIC_SWITCH_FALLBACK_NODES: '7, 8' } }).switch;
      expect([overridden.lockCount, overridden.fallbackNodes, overridden.policy]).toEqual([5, ['7', '8'], 'write-preferring']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(loadConfig({ role: 'switch' }).switch).toEqual({ program: 'forward', rack: 0, racks: 1, grpcPort: 50053 });
  });

  describe('errors name the key, the source and the value', () => {
    it('a value that does not convert, from the environment', () => {
      expect(issuesOf({ role: 'memory', env: { LOCKFABRIC_MEMORY_LOCK_COUNT: 'abc' } })).toEqual([
        "memory.lockCount from LOCKFABRIC_MEMORY_LOCK_COUNT: expected a positive integer, got 'abc'",
      ]);
    });

    it.each<[string, LoadConfigOptions, string]>([
      ['zero lock count', { role: 'memory', argv: ['--memory.lock-count=0'] }, 'memory.lockCount from --memory.lock-count: expected a positive integer, got 0'],
      ['fractional id', { role: 'memory', env: { LOCKFABRIC_NODE_ID: '1.5' } }, 'node.id from LOCKFABRIC_NODE_ID: expected a non-negative integer, got 1.5'],
      ['port out of range', { role: 'memory', argv: ['--health.port', '70000'] }, 'health.port from --health.port: expected a port number 0-65535 (0 picks a free port), got 70000'],
      ['entry bytes not a multiple of 8', { role: 'memory', env: { LOCKFABRIC_MEMORY_ENTRY_BYTES: '12' } }, 'memory.entryBytes from LOCKFABRIC_MEMORY_ENTRY_BYTES: expected a positive multiple of 8 (atomics are 8-byte aligned), got 12'],
      ['unknown switch program', { role: 'switch', argv: ['--switch.program=tofino'] }, "switch.program from --switch.program: expected one of forward, fisslock, netlock, got 'tofino'"],
      ['unknown fisslock policy', { role: 'switch', argv: ['--switch.policy', 'fair'] }, "switch.policy from --switch.policy: expected one of read-preferring, starvation-prevention, write-preferring, got 'fair'"],
      ['switch lock count not an integer', { role: 'switch', env: { LOCKFABRIC_SWITCH_LOCK_COUNT: '2.5' } }, 'switch.lockCount from LOCKFABRIC_SWITCH_LOCK_COUNT: expected a positive integer, got 2.5'],
      ['fallback node out of range', { role: 'switch', argv: ['--switch.fallback-nodes=1,255'] }, "switch.fallbackNodes[1] from --switch.fallback-nodes: expected a list of machine ids in [0, 254], got '255'"],
      ['fallback node not a number', { role: 'switch', env: { LOCKFABRIC_SWITCH_FALLBACK_NODES: 'x' } }, "switch.fallbackNodes[0] from LOCKFABRIC_SWITCH_FALLBACK_NODES: expected a list of machine ids in [0, 254], got 'x'"],
      ['expected compute node out of range', { role: 'coordinator', argv: ['--coordinator.compute-nodes=1,300'] }, "coordinator.computeNodes[1] from --coordinator.compute-nodes: expected a list of machine ids in [0, 254], got '300'"],
      ['expected compute node twice', { role: 'coordinator', env: { LOCKFABRIC_COORDINATOR_COMPUTE_NODES: '1,2,1' } }, 'coordinator.computeNodes from LOCKFABRIC_COORDINATOR_COMPUTE_NODES: expected each compute node id once, got ["1","2","1"]'],
      ['unknown log level', { role: 'driver', env: { LOCKFABRIC_LOG_LEVEL: 'loud' } }, "log.level from LOCKFABRIC_LOG_LEVEL: expected one of trace, debug, info, warn, error, fatal, silent, got 'loud'"],
      ['bad memory node address', { role: 'compute', env: { LOCKFABRIC_COMPUTE_MEMORY_NODES: 'mn-0:50051,mn-1' } }, "compute.memoryNodes[1] from LOCKFABRIC_COMPUTE_MEMORY_NODES: expected host:port with a port 1-65535, got 'mn-1'"],
      ['bad NATS URL', { role: 'compute', env: { LOCKFABRIC_NATS_URL: 'http://nats:4222' } }, "nats.url from LOCKFABRIC_NATS_URL: expected NATS server URLs such as nats://host:4222 (comma-separated), got 'http://nats:4222'"],
      ['cluster name with a dot', { role: 'compute', argv: ['--cluster', 'a.b'] }, "cluster from --cluster: expected a name of letters, digits, - or _ (it becomes a NATS subject token), got 'a.b'"],
      ['ratio above 1', { role: 'compute', env: { LOCKFABRIC_TRACE_RATIO: '1.5' } }, 'trace.ratio from LOCKFABRIC_TRACE_RATIO: expected a ratio between 0 and 1, got 1.5'],
      ['negative slow threshold', { role: 'compute', argv: ['--trace.slow-ms=-1'] }, 'trace.slowMs from --trace.slow-ms: expected a non-negative number of milliseconds, got -1'],
      ['role contradicted', { role: 'memory', env: { LOCKFABRIC_NODE_ROLE: 'compute' } }, "node.role from LOCKFABRIC_NODE_ROLE: this program runs as 'memory', got 'compute'"],
      ['unknown variable', { role: 'memory', env: { LOCKFABRIC_NATS_ULR: 'nats://x:1' } }, 'LOCKFABRIC_NATS_ULR: unknown setting (no config key maps to it)'],
      ['unknown flag', { role: 'memory', argv: ['--verbose'] }, '--verbose: unknown flag'],
      ['camel-case flag', { role: 'memory', argv: ['--memory.lockCount=5'] }, '--memory.lockCount: unknown flag (did you mean --memory.lock-count?)'],
      ['flag without a value', { role: 'memory', argv: ['--memory.lock-count'] }, '--memory.lock-count: expects a value'],
      ['flag followed by a flag', { role: 'memory', argv: ['--nats.url', '--cluster=x'] }, '--nats.url: expects a value'],
      ['--config without a value', { role: 'memory', argv: ['--config'] }, '--config: expects a value'],
    ])('%s', (_label, options, issue) => {
      expect(issuesOf(options)).toEqual([issue]);
    });

    describe('from the config file', () => {
      const load = (text: string | undefined) => issuesOf({ role: 'memory', file: 'lf.json', readText: files(text === undefined ? {} : { 'lf.json': text }) });

      it('unreadable', () => expect(load(undefined)).toEqual(['config file lf.json: cannot be read (ENOENT)']));
      it('not JSON', () => expect(load('{ cluster: x }')[0]).toMatch(/^config file lf\.json: not valid JSON \(/));
      it('not an object', () => expect(load('[1]')).toEqual(['config file lf.json: expected an object, got an array']));
      it('a section that is not an object', () => expect(load('{"memory": 5}')).toEqual(['memory from config file lf.json: expected an object, got 5']));
      it('unknown keys, top-level and nested', () =>
        expect(load('{"clusterName":"x","memory":{"lockCnt":5}}')).toEqual([
          'clusterName from config file lf.json: unknown key',
          'memory.lockCnt from config file lf.json: unknown key',
        ]));
      it('a value of the wrong type', () =>
        expect(load('{"memory":{"lockCount":"many"},"compute":{"memoryNodes":"a:1"}}')).toEqual([
          "memory.lockCount from config file lf.json: expected a positive integer, got 'many'",
          "compute.memoryNodes from config file lf.json: expected a list of host:port, got 'a:1'",
        ]));
      it('a role the program does not have', () => expect(load('{"node":{"role":"driver"}}')).toEqual(["node.role from config file lf.json: this program runs as 'memory', got 'driver'"]));
    });

    it('reports every problem of every source at once', () => {
      const issues = issuesOf({
        role: 'coordinator',
        file: 'lf.json',
        readText: files({ 'lf.json': '{"coordinator":{"heartbeatIntervalMs":0},"bogus":1}' }),
        env: { LOCKFABRIC_COORDINATOR_MISSES_BEFORE_SUSPECT: 'three', LOCKFABRIC_BOGUS: '1' },
        argv: ['--coordinator.grpc-port=-5', '--nope'],
      });
      expect(issues).toEqual([
        'bogus from config file lf.json: unknown key',
        'LOCKFABRIC_BOGUS: unknown setting (no config key maps to it)',
        '--nope: unknown flag',
        'coordinator.heartbeatIntervalMs from config file lf.json: expected a positive integer, got 0',
        "coordinator.missesBeforeSuspect from LOCKFABRIC_COORDINATOR_MISSES_BEFORE_SUSPECT: expected a positive integer, got 'three'",
        'coordinator.grpcPort from --coordinator.grpc-port: expected a port number 0-65535 (0 picks a free port), got -5',
      ]);
    });

    it('puts the issues in the error message, one per line', () => {
      expect(() => loadConfig({ role: 'memory', env: { LOCKFABRIC_MEMORY_LOCK_COUNT: 'abc' } })).toThrow(
        "invalid configuration:\n  - memory.lockCount from LOCKFABRIC_MEMORY_LOCK_COUNT: expected a positive integer, got 'abc'",
      );
    });
  });

  it('accepts the caller’s own flags and leaves positionals alone', () => {
    const config = loadConfig({
      role: 'driver',
      argv: ['run', '--protocol', 'dslr', '--verbose', '--cluster=bench', 'extra'],
      extraFlags: { protocol: { type: 'string' }, verbose: { type: 'boolean' } },
    });
    expect(config.cluster).toBe('bench');
  });
});
