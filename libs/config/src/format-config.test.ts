import { describe, expect, it } from 'vitest';
import { formatConfig, redactUrls } from './format-config.js';
import { loadConfig } from './load-config.js';

describe('formatConfig', () => {
  it('prints one line per key in schema order, masking URL secrets', () => {
    const config = loadConfig({
      role: 'compute',
      env: { LOCKFABRIC_NATS_URL: 'nats://lf:s3cret@nats-0:4222,nats://token@nats-1:4222' },
      argv: ['--compute.memory-nodes=mn-0:50051,mn-1:50051', '--trace.ratio=0.5'],
    });
    expect(formatConfig(config)).toBe(
      [
        'cluster = "local"',
        'nats.url = "nats://lf:***@nats-0:4222,nats://***@nats-1:4222"',
        'nats.seedFile = (unset)',
        'nats.caFile = (unset)',
        'node.id = 0',
        'node.role = "compute"',
        'node.rack = 0',
        'memory.grpcPort = 50051',
        'memory.lockCount = 65536',
        'memory.entryBytes = 8',
        'memory.iopsCap = (unset)',
        'memory.dataBytes = 67108864',
        'memory.clientsGrpcPort = (unset)',
        'memory.clients = 64',
        'compute.grpcPort = 50052',
        'compute.memoryGrpcPort = 50055',
        'compute.memoryNodes = ["mn-0:50051", "mn-1:50051"]',
        'compute.clients = 8',
        'switch.program = "forward"',
        'switch.rack = 0',
        'switch.racks = 1',
        'switch.grpcPort = 50053',
        'switch.controlAddress = (unset)',
        'switch.policy = (unset)',
        'switch.lockCount = (unset)',
        'switch.fallbackNodes = (unset)',
        'coordinator.heartbeatIntervalMs = 100',
        'coordinator.missesBeforeSuspect = 3',
        'coordinator.grpcPort = 50054',
        'coordinator.leaseBoundsMs = (unset)',
        'coordinator.computeNodes = (unset)',
        'health.port = 8080',
        'trace.ratio = 0.5',
        'trace.slowMs = 10',
        'log.level = "info"',
        'tls.mode = "mtls"',
        'tls.dir = "/etc/lockfabric/tls"',
        'tls.ca = (unset)',
        'tls.cert = (unset)',
        'tls.key = (unset)',
      ].join('\n'),
    );
  });

  it('leaves URLs without credentials alone', () => {
    expect(redactUrls('nats://nats-0:4222')).toBe('nats://nats-0:4222');
    expect(redactUrls('plain text @ here')).toBe('plain text @ here');
  });
});
