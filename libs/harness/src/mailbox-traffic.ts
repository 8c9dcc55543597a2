import type { ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import type { ClientPorts, Mailbox } from '@lockfabric/ports';
import { runInMemory } from './in-memory-run.js';
import type { InMemoryRunResult } from './in-memory-run.js';
import { runSwarmSeed } from './swarm/index.js';
import type { SwarmSeedResult } from './swarm/index.js';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { ScenarioSetupError } from './errors.js';

/**
 * Message counting for protocols that talk to memory-node services over the mailbox (the
 * two-sided baselines' tests): every client and service SEND of a `sim` run is tallied.
 */

/** Messages sent by the clients and by the memory-node services of a run. */
export interface Traffic {
  clientSends: number;
  serviceSends: number;
  /** Service replies by op code (`data[0]`). */
  readonly serviceReplies: Map<number, number>;
}

function counted(mailbox: Mailbox, onSend: (data: Uint8Array | undefined) => void): Mailbox {
  return {
    self: mailbox.self,
    send: (message) => {
      onSend(message.data);
      mailbox.send(message);
    },
    receive: (match, options) => mailbox.receive(match, options),
  };
}

/** `protocol` with every client and memory-service SEND counted in `traffic`. */
export function countingProtocol(protocol: ProtocolDefinition, traffic: Traffic): ProtocolDefinition {
  const memory = protocol.services?.memory;
  if (!memory) throw new ScenarioSetupError('mailbox traffic', `${protocol.id} has no memory service`);
  const wrap = (ports: ClientPorts, onSend: (data: Uint8Array | undefined) => void): ClientPorts => ({ ...ports, mailbox: counted(ports.mailbox, onSend) });
  return {
    ...protocol,
    services: {
      memory: (context, options) =>
        memory(
          {
            ...context,
            ports: wrap(context.ports, (data) => {
              traffic.serviceSends++;
              const op = data?.[0] ?? -1;
              traffic.serviceReplies.set(op, (traffic.serviceReplies.get(op) ?? 0) + 1);
            }),
          },
          options,
        ),
    },
    createClient: (ports, options) => protocol.createClient(wrap(ports, () => traffic.clientSends++), options),
  };
}

export async function countedRun(protocol: ProtocolDefinition, spec: WorkloadSpec, protocolOptions: ProtocolOptions = {}): Promise<{ traffic: Traffic; result: InMemoryRunResult }> {
  const traffic: Traffic = { clientSends: 0, serviceSends: 0, serviceReplies: new Map() };
  const result = await runInMemory({ substrate: 'sim', protocol: countingProtocol(protocol, traffic), protocolOptions, spec });
  return { traffic, result };
}

/** One client, one operation at a time: every acquire is uncontended. */
export function soloSpec(operations: number): WorkloadSpec {
  return { clients: 1, locks: 8, readRatio: 0.5, distribution: 'uniform', operations, thinkNs: 1_000, criticalSectionNs: 1_000, seed: 3 };
}

/** `check --swarm` seeds first…first+count-1: the failing ones and how many runs killed a compute node or paused one. */
export async function swarmSweep(protocol: ProtocolDefinition, count: number, options: ProtocolOptions = {}, first = 1): Promise<{ failures: SwarmSeedResult[]; kills: number; pauses: number }> {
  const failures: SwarmSeedResult[] = [];
  let kills = 0;
  let pauses = 0;
  for (let seed = first; seed < first + count; seed++) {
    const r = await runSwarmSeed(protocol, seed, options);
    if (r.failure) failures.push(r);
    if (!/kill=none/.test(r.description)) kills++;
    if (!/pauses=none/.test(r.description)) pauses++;
  }
  return { failures, kills, pauses };
}

