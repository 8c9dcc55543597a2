// A small in-memory switch network in virtual time for scripted packet scenarios (protocol tests).
import { SERVICE_CLIENT } from '@lockfabric/locks-common';
import type { NodeService, ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import { LockTimeoutError, noopTrace } from '@lockfabric/ports';
import type { ClientAddress, ClientPorts, LockClient, LockMode, LockPacket, NodeId, SwitchPort, Trace } from '@lockfabric/ports';
import { InMemoryMailboxHub, SchedulerClock, SeededRandom, VirtualScheduler } from '@lockfabric/sim';
import { Switch, expandEgress } from '@lockfabric/switch';
import type { SwitchProgram } from '@lockfabric/switch';
import { FailureHub } from './node-failure.js';

export interface SwitchNetOptions {
  readonly seed: number;
  readonly computeNodes: readonly NodeId[];
  readonly program: SwitchProgram;
  readonly linkNs?: number;
  readonly jitterNs?: number;
}

export interface SentPacket {
  readonly atNs: number;
  readonly from: NodeId;
  readonly packet: LockPacket;
}

export function createSwitchNet(options: SwitchNetOptions) {
  const scheduler = new VirtualScheduler();
  const clock = new SchedulerClock(scheduler);
  const random = new SeededRandom(options.seed);
  const sw = new Switch(options.program);
  const linkNs = options.linkNs ?? 1_000;
  const jitterNs = options.jitterNs ?? 0;
  const handlers = new Map<NodeId, Set<(packet: LockPacket) => void>>();
  const sent: SentPacket[] = [];
  const delivered: SentPacket[] = [];
  const hop = () => linkNs + (jitterNs > 0 ? random.int(jitterNs) : 0);
  const hub = new InMemoryMailboxHub(scheduler, { latencyNs: 200, jitterNs: 0, queueBound: 1_000_000, random });
  const services: NodeService[] = [];
  const servicesByNode = new Map<NodeId, NodeService>();
  /** What node services hear of compute-node failures: tests fire them (`net.failures.fire(node)`). */
  const failures = new FailureHub();

  const port = (machine: NodeId): SwitchPort => ({
    machine,
    send(packet) {
      sent.push({ atNs: scheduler.nowNs(), from: machine, packet });
      scheduler.at(scheduler.nowNs() + hop(), () => {
        for (const copy of expandEgress(sw.ingest(packet, machine), machine)) {
          scheduler.at(scheduler.nowNs() + hop(), () => {
            delivered.push({ atNs: scheduler.nowNs(), from: copy.machine, packet: copy.packet });
            for (const handler of handlers.get(copy.machine) ?? []) handler(copy.packet);
          });
        }
      });
    },
    onPacket(handler) {
      let set = handlers.get(machine);
      if (!set) handlers.set(machine, (set = new Set()));
      set.add(handler);
      return () => set.delete(handler);
    },
  });

  const clientPorts = (self: ClientAddress, trace: Trace = noopTrace): ClientPorts => ({
    self,
    switchPort: port(self.node),
    mailbox: hub.mailbox(self),
    clock,
    random,
    trace,
    verbs: undefined as never,
    locks: { memoryNodes: [], entryBytes: 8, lockCount: 1 << 20 },
    descriptors: undefined as never,
  });

  return {
    scheduler,
    clock,
    random,
    sw,
    sent,
    delivered,
    failures,
    clientPorts,
    startServices(definition: ProtocolDefinition, protocolOptions?: ProtocolOptions): void {
      for (const node of options.computeNodes) {
        const service = definition.services?.compute?.(
          { ports: clientPorts({ node, client: SERVICE_CLIENT }), memoryNodes: [], computeNodes: options.computeNodes, failures },
          protocolOptions,
        );
        if (service) services.push(service);
        if (service) servicesByNode.set(node, service);
      }
    },
    /** Stops one node's service, as when that node dies. */
    async stopServicesOf(node: NodeId): Promise<void> {
      const service = servicesByNode.get(node);
      servicesByNode.delete(node);
      const at = service ? services.indexOf(service) : -1;
      if (at >= 0) services.splice(at, 1);
      await service?.stop();
    },
    async stopServices(): Promise<void> {
      servicesByNode.clear();
      for (const service of services.splice(0)) await service.stop();
    },
  };
}

export type SwitchNet = ReturnType<typeof createSwitchNet>;

export interface WorkloadOptions {
  readonly clientsPerNode: number;
  readonly opsPerClient: number;
  readonly locks: number;
  readonly sharedRatio: number;
  readonly maxHoldNs: number;
  readonly timeoutMs: number;
}

export interface WorkloadResult {
  readonly violations: number;
  readonly granted: number;
  readonly timeouts: number;
  readonly otherErrors: unknown[];
}

/**
 * Closed-loop clients on every compute node. The checker records a holding from the moment
 * `acquire` resolves until `release` is called; those intervals lie inside the real ones, so any
 * overlap of an exclusive holding with another holding is a real exclusion violation.
 */
export async function runWorkload(
  net: SwitchNet,
  definition: ProtocolDefinition,
  computeNodes: readonly NodeId[],
  workload: WorkloadOptions,
  protocolOptions?: ProtocolOptions,
  makeClient?: (ports: ClientPorts) => LockClient,
): Promise<WorkloadResult> {
  net.startServices(definition, protocolOptions);
  const holders = new Map<number, Map<string, LockMode>>();
  let violations = 0;
  let granted = 0;
  let timeouts = 0;
  const otherErrors: unknown[] = [];
  const loops: Promise<void>[] = [];
  for (const node of computeNodes) {
    for (let c = 0; c < workload.clientsPerNode; c++) {
      const ports = net.clientPorts({ node, client: c });
      const client = makeClient ? makeClient(ports) : definition.createClient(ports, protocolOptions);
      const name = `${node}/${c}`;
      loops.push(
        (async () => {
          for (let i = 0; i < workload.opsPerClient; i++) {
            const lock = net.random.int(workload.locks);
            const mode: LockMode = net.random.next() < workload.sharedRatio ? 'shared' : 'exclusive';
            try {
              const grant = await client.acquire(lock, mode, { timeoutMs: workload.timeoutMs });
              granted++;
              const held = holders.get(lock) ?? new Map<string, LockMode>();
              holders.set(lock, held);
              for (const other of held.values()) if (mode === 'exclusive' || other === 'exclusive') violations++;
              held.set(name, mode);
              await net.clock.sleep(net.random.int(workload.maxHoldNs));
              held.delete(name);
              await client.release(grant);
            } catch (error) {
              if (error instanceof LockTimeoutError) timeouts++;
              else otherErrors.push(error);
            }
          }
        })(),
      );
    }
  }
  await net.scheduler.run();
  await Promise.all(loops);
  await net.stopServices();
  return { violations, granted, timeouts, otherErrors };
}
