import { MailboxHub, startMemoryServer } from '@lockfabric/live';
import { runService } from '@lockfabric/service';
import { MemoryNodeExecutor } from './memory-executor.js';
import { startProtocolServices } from './protocol-services.js';

/** memory-node: registers the lock-table region and serves verbs through the emulated NIC. */
await runService({
  role: 'memory',
  needsNats: false,
  start: async ({ config, logger, clock, metrics, telemetry, nc, subjects }) => {
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
    // Protocol services (ShiftLock recovery) need SEND, so they run when NATS is reachable.
    const mailboxes = nc ? new MailboxHub({ nc, subjects, node: config.node.id, logger }) : undefined;
    const services = mailboxes
      ? startProtocolServices({ node: config.node.id, executor, mailboxes, clock, trace: telemetry.trace, lockTableBytes: config.memory.lockCount * config.memory.entryBytes })
      : [];
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
      close: async () => {
        for (const service of services) await service.stop();
        await mailboxes?.close();
        await server.close({ graceMs: 2_000 });
      },
    };
  },
});
