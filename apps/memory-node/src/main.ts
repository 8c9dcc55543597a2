import { startMemoryServer } from '@lockfabric/live';
import { runService } from '@lockfabric/service';
import { MemoryNodeExecutor } from './memory-executor.js';

/** memory-node: registers the lock-table region and serves verbs through the emulated NIC. */
await runService({
  role: 'memory',
  needsNats: false,
  start: async ({ config, logger, clock, metrics, telemetry }) => {
    const executor = new MemoryNodeExecutor(
      {
        node: config.node.id,
        lockCount: config.memory.lockCount,
        entryBytes: config.memory.entryBytes,
        lockTableBytes: config.memory.lockCount * config.memory.entryBytes,
        ...(config.memory.iopsCap !== undefined ? { iopsCap: config.memory.iopsCap } : {}),
      },
      clock,
      telemetry.trace,
    );
    const server = await startMemoryServer({ executor, port: config.memory.grpcPort, logger });
    const verbs = metrics.counter({ name: 'lockfabric_nic_verbs_total', help: "Verbs served by this node's NIC, by opcode", labelNames: ['opcode'] });
    const malformed = metrics.counter({ name: 'lockfabric_decode_errors_total', help: 'Malformed frames and requests dropped', labelNames: ['kind'] });
    let seen: Record<string, number> = {};
    let seenMalformed = { frames: 0, requests: 0 };
    return {
      ready: () => true,
      endpoints: { grpc: server.port, address: server.address },
      collectMetrics: () => {
        const byOpcode = executor.nic.counters.snapshot().byOpcode as Record<string, number>;
        for (const [opcode, count] of Object.entries(byOpcode)) {
          verbs.inc({ opcode }, count - (seen[opcode] ?? 0));
        }
        seen = { ...byOpcode };
        const stats = server.stats();
        malformed.inc({ kind: 'frame' }, stats.malformedFrames - seenMalformed.frames);
        malformed.inc({ kind: 'request' }, stats.malformedRequests - seenMalformed.requests);
        seenMalformed = { frames: stats.malformedFrames, requests: stats.malformedRequests };
      },
      close: () => server.close({ graceMs: 2_000 }),
    };
  },
});
