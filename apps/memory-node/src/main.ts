import { MailboxHub, MalformedInputCounter, startMemoryServer } from '@lockfabric/live';
import { runService } from '@lockfabric/service';
import { MemoryNodeExecutor } from './memory-executor.js';
import { startNodeServices } from './node-services.js';
import { startLocalClients } from './local-clients.js';

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
        dataBytes: config.memory.dataBytes,
      },
      clock,
      telemetry.trace,
    );
    // One incarnation per process: the verbs server describes it, the lock managers stamp it on replies.
    const incarnation = Date.now();
    const server = await startMemoryServer({ executor, port: config.memory.grpcPort, logger, incarnation });
    // Protocol services (ShiftLock recovery, the rpc and traditional lock managers) need SEND, and
    // fencing and dead-holder recovery follow the coordinator's views: without NATS there is neither.
    const mailboxes = nc ? new MailboxHub({ nc, subjects, node: config.node.id, logger }) : undefined;
    const watchMalformed = new MalformedInputCounter({ logger, clock });
    const nodeServices = nc && mailboxes ? startNodeServices({ nc, subjects, node: config.node.id, executor, mailboxes, clock, trace: telemetry.trace, logger, malformed: watchMalformed, lockTableBytes: config.memory.lockCount * config.memory.entryBytes, incarnation }) : undefined;
    const watch = nodeServices?.watch;
    // Clients beside the table (ALock's local cohort) need SEND too, for protocols that message.
    const clientsPort = config.memory.clientsGrpcPort;
    if (clientsPort !== undefined && !mailboxes) logger.warn('memory.clientsGrpcPort is set but NATS is unreachable: this node hosts no clients');
    const localClients = clientsPort !== undefined && mailboxes ? await startLocalClients({ node: config.node.id, executor, mailboxes, maxClients: config.memory.clients, port: clientsPort, trace: telemetry.trace, logger }) : undefined;
    const fenced = metrics.counter({ name: 'lockfabric_memory_fenced_requests_total', help: 'Work requests refused because their compute node was declared dead (fenced)' });
    const fencedNodes = metrics.gauge({ name: 'lockfabric_memory_fenced_nodes', help: 'Compute nodes currently fenced' });
    const holdsCleared = metrics.counter({ name: 'lockfabric_memory_dead_holds_cleared_total', help: 'Lock words of dead compute nodes freed by this memory node' });
    let seenFenced = 0;
    let seenRecoveries = 0;
    const verbs = metrics.counter({ name: 'lockfabric_nic_verbs_total', help: "Verbs served by this node's NIC, by opcode", labelNames: ['opcode'] });
    // Verbs per doorbell (one gRPC message) is the rate of verbs over the rate of this: batching under load.
    const doorbells = metrics.counter({ name: 'lockfabric_nic_doorbells_total', help: "Doorbells (work-request batches, one gRPC message each) served by this node's NIC" });
    let seenDoorbells = 0;
    const malformed = metrics.counter({ name: 'lockfabric_decode_errors_total', help: 'Malformed frames and requests dropped', labelNames: ['kind'] });
    let seen: Record<string, number> = {};
    let seenMalformed = { frames: 0, requests: 0 };
    return {
      ready: () => true,
      endpoints: { grpc: server.port, address: server.address, ...(localClients ? { clientsGrpc: localClients.port } : {}) },
      collectMetrics: () => {
        const snapshot = executor.nic.counters.snapshot();
        const byOpcode = snapshot.byOpcode as Record<string, number>;
        doorbells.inc({}, snapshot.doorbells - seenDoorbells);
        seenDoorbells = snapshot.doorbells;
        for (const [opcode, count] of Object.entries(byOpcode)) {
          verbs.inc({ opcode }, count - (seen[opcode] ?? 0));
        }
        seen = { ...byOpcode };
        const stats = server.stats();
        malformed.inc({ kind: 'frame' }, stats.malformedFrames - seenMalformed.frames);
        malformed.inc({ kind: 'request' }, stats.malformedRequests - seenMalformed.requests);
        seenMalformed = { frames: stats.malformedFrames, requests: stats.malformedRequests };
        fenced.inc({}, executor.fencedCount - seenFenced);
        seenFenced = executor.fencedCount;
        fencedNodes.set({}, executor.fences.all().length);
        const recoveries = watch?.recoveries() ?? [];
        const total = recoveries.reduce((sum, r) => sum + r.cleared, 0);
        holdsCleared.inc({}, Math.max(0, total - seenRecoveries));
        seenRecoveries = total;
      },
      close: async () => {
        await nodeServices?.stop();
        await localClients?.close();
        await mailboxes?.close();
        await server.close({ graceMs: 2_000 });
      },
    };
  },
});
