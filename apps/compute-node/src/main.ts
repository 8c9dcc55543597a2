import { Nic, NodeMemory, QueuePairVerbs, registerDescriptorRegion } from '@lockfabric/fabric';
import { startFailureFeed, startQueueRecoveryResponder, startRejoinWatch } from '@lockfabric/control';
import { DESCRIPTOR_ACCESS_POLICY, MailboxHub, MalformedInputCounter, NatsControlBus, SwitchLink, followFences, startMemoryServer } from '@lockfabric/live';
import type { MemoryDescription } from '@lockfabric/live';
import { runService } from '@lockfabric/service';
import { TotalsCounter } from '@lockfabric/telemetry';
import { ComputeRunService, LiveFabric } from '@lockfabric/run-host';
import { registerComputeMetrics } from './compute-metrics.js';
import { computeNodePlugins } from '@lockfabric/lock-catalog-control';
import type { SwitchPort } from '@lockfabric/ports';
import { EpochStamp, epochStampingNats, followMembershipEpochs } from './epoch-stamp.js';
import { DescriptorMemoryExecutor } from './descriptor-executor.js';

/**
 * compute-node: hosts lock clients. It connects a queue pair to each memory node, serves its own
 * descriptor slots to peers, exchanges client messages over NATS, and runs the driver's workloads.
 */
await runService({
  role: 'compute',
  needsNats: true,
  start: async ({ config, logger, telemetry, nc, subjects, metrics, clock }) => {
    const node = config.node.id;
    const memory = new NodeMemory(node);
    registerDescriptorRegion(memory, false);
    const nic = new Nic(memory);
    // Peers' verbs into this node's queue nodes; a compute node declared dead is fenced here too.
    const descriptors = new DescriptorMemoryExecutor(node, memory, nic);
    const memoryServer = await startMemoryServer({ port: config.compute.memoryGrpcPort, logger, executor: descriptors, policy: DESCRIPTOR_ACCESS_POLICY });
    const fabric = new LiveFabric(node, nic, logger);
    const lockMetrics = registerComputeMetrics(metrics, fabric);
    const memoryNodes: MemoryDescription[] = [];
    for (const address of config.compute.memoryNodes) memoryNodes.push(await fabric.addMemoryNode(address));
    logger.info(`connected to ${memoryNodes.length} memory node(s): ${memoryNodes.map((d) => d.node).join(', ') || 'none'}`);
    // One count of dropped input for every decoder of this node, exported by source (subject).
    const malformed = new MalformedInputCounter({ logger });
    const mailboxes = new MailboxHub({ nc, subjects, node, logger, malformed });
    // batches into the switch carry this node's membership epoch (the switch's admission fence)
    const epochs = new EpochStamp();
    const membershipEpochs = followMembershipEpochs(nc, subjects, epochs, malformed);
    // multi-rack switch programs: a lock's packets go to its owner's switch, any rack's
    const racks = config.switch.racks;
    const switchInputs = racks > 1 ? Array.from({ length: racks }, (_, r) => subjects.switchIn(r)) : [subjects.switchIn(config.node.rack)];
    const switchLink = new SwitchLink({ nc: epochStampingNats(nc, switchInputs, epochs), subjects, machine: node, rack: config.node.rack, racks, logger, malformed });
    // protocols' node-side plug-ins (recovery responders, fences, watchdog reports); one may
    // interpose on the switch link (FissLock holds this machine's traffic during its recovery)
    const plugins = computeNodePlugins();
    const switchPort = plugins.reduce((link, plugin) => plugin.wrapSwitch(link), switchLink as SwitchPort);
    // FailureNotices for lock servers (srvlock, parlock, NetLock's server): drop a dead node's holds.
    // The control-plane side of this node (libs/control) over NATS: the same code the sim runs.
    const bus = new NatsControlBus(nc);
    const failures = startFailureFeed({ bus, subjects, node, logger, malformed });
    const descriptorFences = followFences({ nc, subjects, fences: descriptors.fences, malformed, logger, onFence: (f) => logger.warn(`compute node ${node}: fenced compute node ${f.node} (incarnation ${f.incarnation}, epoch ${f.epoch}) from this node's queue nodes`) });
    const fencedCounter = metrics.counter({ name: 'lockfabric_compute_fenced_requests_total', help: "Peers' work requests into this node's queue nodes refused because their compute node was declared dead (fenced)" });
    let seenFenced = 0;
    const runs = new ComputeRunService({ node, maxClients: config.compute.clients, fabric, memory, memoryNodes, mailboxes, switchPort, racks, failures, malformed, trace: lockMetrics.trace(telemetry.trace), logger });
    const { server, port } = await runs.listen(config.compute.grpcPort);
    const started = plugins.map((plugin) => plugin.start({ bus, clock, subjects, node, run: () => runs.current, logger, malformed, onEpoch: (epoch) => epochs.observe(epoch) }));
    // Declared dead while still running (a partition, a long stall): retire that incarnation, rejoin with a new one.
    const rejoin = startRejoinWatch({ bus, clock, nowMs: Date.now, subjects, node, heartbeatIntervalMs: config.coordinator.heartbeatIntervalMs, logger, malformed, retire: (reason) => {
      // declared dead while still running: plug-ins cut their clients off first (typed errors, not timeouts)
      for (const handle of started) handle.fence(reason);
      return runs.retire(reason);
    } });
    const rebinds = metrics.counter({ name: 'lockfabric_compute_memory_rebinds_total', help: 'Memory-node queue-pair rebinding: downs, describe attempts, failed attempts, incarnation changes', labelNames: ['event'] });
    let seenRebinds = fabric.rebindStats();
    const rejoinCounter = metrics.counter({ name: 'lockfabric_compute_rejoins_total', help: 'Times this compute node was declared dead while running and rejoined with a new incarnation' });
    let seenRejoins = 0;
    // mcs/alock recovery after a compute node's death: gate, abort, table reset (libs/control queue-recovery-responder.ts)
    const queueVerbs = new QueuePairVerbs({ localNode: node, post: (batch, options) => fabric.post(batch, options) });
    const queueRecovery = startQueueRecoveryResponder({ bus, clock, subjects, node, run: () => runs.current, verbs: queueVerbs, logger, malformed });
    const runCounter = metrics.counter({ name: 'lockfabric_runs_total', help: 'Workload runs completed by this compute node' });
    const decodeErrors = new TotalsCounter(metrics.counter({ name: 'lockfabric_decode_errors_total', help: 'Malformed input dropped, by source', labelNames: ['source'] }), 'source');
    let seenRuns = 0;
    return {
      ready: () => true,
      endpoints: { grpc: port, memoryGrpc: memoryServer.port },
      collectMetrics: () => {
        lockMetrics.collect();
        const rebound = fabric.rebindStats();
        for (const event of ['downs', 'attempts', 'failures', 'incarnationChanges'] as const) rebinds.inc({ event }, rebound[event] - seenRebinds[event]);
        seenRebinds = rebound;
        runCounter.inc(undefined, runs.runs - seenRuns);
        seenRuns = runs.runs;
        rejoinCounter.inc(undefined, rejoin.rejoins() - seenRejoins);
        seenRejoins = rejoin.rejoins();
        decodeErrors.update(malformed.bySource());
        fencedCounter.inc(undefined, descriptors.fencedCount - seenFenced);
        seenFenced = descriptors.fencedCount;
      },
      close: async () => {
        await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
        for (const handle of started) handle.close();
        rejoin.close();
        queueRecovery.close();
        membershipEpochs.unsubscribe();
        failures.close();
        descriptorFences.stop();
        await runs.close();
        fabric.close();
        for (const plugin of plugins) plugin.stopSwitch();
        switchLink.close();
        await mailboxes.close();
        await memoryServer.close({ graceMs: 1_000 });
      },
    };
  },
});
