import type { NodeServiceContext, ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import type { ClientPorts, LockClient } from '@lockfabric/ports';
import type { FissGrant } from './client.js';
import { startFallbackManager, switchCapacityOf } from './fallback.js';
import { FISSLOCK_OPTION_HELP, readFissLockOptions } from './options.js';
import { RecoverableFissLockClient } from './recovery/recovery-client.js';
import { agentPoolFor, forgetAgentPool } from './registry.js';
import { MappedFissLockClient } from './lock-ids/mapped-client.js';
import { startLockIdService } from './lock-ids/id-map-service.js';
import { fissLockSwarmInvariants } from './checks/swarm-invariants.js';
import type { AgentPoolService } from './checks/swarm-invariants.js';
import { checkFissLockSwitch } from './switch/switch-check.js';
import { buildFissLockSwitchProgram } from './switch/switch-program.js';

/** The agent pool of one compute node (spec §2.2), started before the node's clients. */
export function startAgentPool(context: NodeServiceContext, options?: ProtocolOptions): AgentPoolService {
  const parsed = readFissLockOptions(options);
  const pool = agentPoolFor(context.ports, parsed);
  pool.placeAtHomes(context.computeNodes); // FissLock-Local only
  const capacity = switchCapacityOf(context.ports, parsed.switchCapacity);
  // lockIds=mapped: the id-map daemon (on its host) takes the id-map mail of the service mailbox (§6.5)
  const idMap = parsed.lockIds === 'mapped' ? startLockIdService(context, parsed, capacity) : undefined;
  // the node's ParLock-style manager for out-of-range locks (§6.6); it also answers topology queries
  const fallback = startFallbackManager(idMap?.context ?? context, capacity);
  return {
    pool,
    stop: async () => {
      pool.stop();
      forgetAgentPool(context.ports);
      await fallback.stop();
      await idMap?.stop();
    },
  };
}

/** A FissLock client; with lockIds=mapped it takes sparse application ids (§6.5). */
export function createFissLockClient(ports: ClientPorts, options?: ProtocolOptions): LockClient<FissGrant> {
  const parsed = readFissLockOptions(options);
  // recoverable clients keep what they hold and wait for, which S1 reports (spec §2.3, §7.2)
  const client = new RecoverableFissLockClient(ports, parsed);
  return parsed.lockIds === 'mapped' ? new MappedFissLockClient(client, ports, parsed) : client;
}

export const fisslock: ProtocolDefinition = {
  id: 'fisslock',
  // The coordinator drives S1–S3 (FissLock §7.2) through the recovery driver of libs/locks/fisslock/control.
  recovery: {
    compute: { mechanism: 'driven', action: 'coordinator runs S1 (pause survivors, gather agents and clients), S2 (repair: the dead server\'s holds and queue entries dropped, its agents rebuilt on survivors), S3 (switch registers rewritten, the dead machine\'s seq window fenced) over ctl.fiss.<node>.<verb>' },
    switch: { mechanism: 'await-restart', action: 'S0 restart; once it is back the coordinator runs S1 pause and gather agent states, S2 repair, S3 rebuild switch registers, then resumes the servers' },
  },
  // Live: the timers assume a switch round trip of a few µs; over NATS one takes 1–50 ms on a loaded
  // machine, so with these sim defaults every attempt would time out before its GRANT. The RTO stays
  // well above a loaded round trip: spurious resends feed the duplicate paths (README).
  liveDefaults: { rtoNs: 250_000_000, attemptTimeoutNs: 2_000_000_000, starvePeriodNs: 20_000_000 },
  // A dead machine's agents are rebuilt by the coordinator's S1–S3 (in sim too). A lock that loss,
  // duplication or a cut leave for the per-lock repair (FissLock §7) is reported by the agent pool's
  // stuck-lock watchdog, and the sim control plane answers with the repair as the live coordinator
  // does. T_STUCK is cut to one T_ACQ so that the repair lands within the 50 ms heal budget. After
  // healing the swarm checks what no history shows: one agent per lock, Lemma 1, the end state.
  swarm: {
    pauses: 'beyond-lease',
    switchFaults: 'lossy',
    partitions: true,
    nodeKill: true,
    memoryRestart: true,
    flushedVerbs: true,
    options: () => ({ tStuckNs: 10_000_000 }),
    invariants: fissLockSwarmInvariants,
  },
  summary: 'FissLock: grant decisions on the switch (18 bits per lock), agents on the holders\' machines',
  fabric: 'switch',
  capabilities: [],
  entryBytes: 8,
  modes: ['shared', 'exclusive'],
  options: FISSLOCK_OPTION_HELP,
  switchProgram: 'fisslock',
  buildSwitchProgram: buildFissLockSwitchProgram,
  checkRunningSwitch: checkFissLockSwitch,
  services: { compute: startAgentPool },
  createClient: createFissLockClient,
};
