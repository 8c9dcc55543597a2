import { DECIDER_INITIAL_VALUES, GatedSwitchPort, existingAgentPool, fisslock, isMachineFenced, machineRecovery, readFissLockOptions } from '@lockfabric/lock-fisslock';
import type { AgentPool } from '@lockfabric/lock-fisslock';
import { startFissRecoveryHook, startFissRecoveryResponder, startFissSelfFence, startFissStuckReporter } from '@lockfabric/lock-fisslock-control';
import type { FissPoolHandle, FissRecoveryHook } from '@lockfabric/lock-fisslock-control';
import { InvariantError } from '@lockfabric/ports';
import type { SwitchPort } from '@lockfabric/ports';
import type { ComputeNodePlugin, CoordinatorPlugin, CoordinatorPluginDeps, HostedRun } from './plugins.js';

/** The agent pool of the running (or lingering) FissLock run on `node`; another protocol's run has none. */
function agentPoolOf(run: HostedRun | undefined, node: number): AgentPool | undefined {
  return run ? existingAgentPool(run.locks, node) : undefined;
}

/** That pool's recovery steps with its policy; none once the node fenced itself (declared dead, it takes no part). */
function recoveryPoolOf(run: HostedRun | undefined, node: number): FissPoolHandle | undefined {
  const pool = agentPoolOf(run, node);
  if (!pool || !run || isMachineFenced(pool)) return undefined;
  return { pool: machineRecovery(pool), policy: readFissLockOptions(run.options).policy };
}

/** Coordinator: S1–S3 after a switch restart, a compute death or a stuck-lock report (FissLock §7.2). */
function coordinator(deps: CoordinatorPluginDeps): CoordinatorPlugin {
  // the control plane calls the driver factory once, synchronously, while it starts
  let hook: FissRecoveryHook | undefined;
  const racks = deps.racks && deps.racks > 1 ? { racks: deps.racks } : {};
  return {
    controlPlane: { recoveryDrivers: [(context) => (hook = startFissRecoveryHook({ ...context, ...racks, switchControl: (address) => deps.switchControl(address, DECIDER_INITIAL_VALUES), ...(deps.timings ?? {}) }))] },
    counters: [
      {
        name: 'lockfabric_coordinator_fiss_stuck_total',
        help: 'FissLock stuck-lock reports (ctl.report.fiss.stuck), by what became of them: repair (an S1–S3 queued), coalesced (covered by one), dismissed (a suspicion the nodes showed a long hold), unanswered (a suspicion some node did not answer), dropped (busy, rate or full)',
        labelNames: ['outcome'],
        read: () => [
          { labels: { outcome: 'repair' }, total: hook?.stuck.repairs ?? 0 },
          { labels: { outcome: 'coalesced' }, total: hook?.stuck.coalesced ?? 0 },
          { labels: { outcome: 'dismissed' }, total: hook?.triage.dismissed ?? 0 },
          { labels: { outcome: 'unanswered' }, total: hook?.triage.unanswered ?? 0 },
          { labels: { outcome: 'dropped' }, total: hook ? hook.triage.droppedBusy + hook.triage.droppedRate + hook.triage.droppedFull : 0 },
        ],
      },
    ],
  };
}

/**
 * Compute node: the S1–S3 responder, which holds this machine's switch traffic between S2 and the
 * end of S3 (the gate); the self-fence of a node declared dead while running (FissLock §7.1); the
 * agent pool's T_STUCK watchdog reports to the coordinator.
 */
function computeNode(): ComputeNodePlugin {
  let gate: GatedSwitchPort | undefined;
  return {
    wrapSwitch: (link: SwitchPort) => (gate = new GatedSwitchPort(link)),
    start: (deps) => {
      if (!gate) throw new InvariantError('fisslock compute-node plug-in', 'start before wrapSwitch');
      const { bus, clock, subjects, node, logger, malformed } = deps;
      const responder = startFissRecoveryResponder({ bus, clock, subjects, node, pool: () => recoveryPoolOf(deps.run(), node), gate, logger, malformed, onEpoch: deps.onEpoch });
      const fence = startFissSelfFence({ bus, subjects, node, pool: () => agentPoolOf(deps.run(), node), logger });
      const stuck = startFissStuckReporter({ bus, clock, subjects, node, pool: () => agentPoolOf(deps.run(), node), logger });
      return {
        fence: (reason) => fence.fence(reason),
        close: () => {
          responder.close();
          fence.close();
          stuck.close();
        },
      };
    },
    stopSwitch: () => gate?.stop(),
  };
}

export const fisslockPlugins = [fisslock.id, { coordinator, computeNode }] as const;
