import { DslrClient, DSLR_OPTION_HELP, crossCheckDslrOptions, dslrMultiSlotOptions, dslrSwarmOptions, readDslrOptionsFrom } from '@lockfabric/lock-dslr';
import type { DslrOptions } from '@lockfabric/lock-dslr';
import { OptionReader } from '@lockfabric/locks-common';
import type { ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import { ConfigError } from '@lockfabric/ports';
import type { ClientPorts, Random } from '@lockfabric/ports';
import { DSLR_PLUS_POLICY, TruncatedExponentialPacing } from './poll-backoff.js';
import type { PollBackoffPolicy } from './poll-backoff.js';

export interface DslrBackoffOptions {
  readonly dslr: DslrOptions;
  readonly pollBackoff: PollBackoffPolicy;
}

const { polling: _polling, ...INHERITED_HELP } = DSLR_OPTION_HELP;

export const DSLR_BACKOFF_OPTION_HELP: Readonly<Record<string, string>> = {
  ...INHERITED_HELP,
  pollBackoffInitialNs: 'first wait before a poll in ns, doubled per poll (default 100)',
  pollBackoffCapMinNs: 'lowest value of the adaptive cap t_max in ns (default 100)',
  pollBackoffCapMaxNs: 'highest value of t_max in ns (default 3200)',
  pollJitterNs: 'uniform jitter added to every poll wait, in ns (default 2000)',
  retuneIntervalNs: 'window after which t_max is re-tuned from the retry ratio, in ns (default 1000000)',
  retryRatioHigh: 't_max doubles when the window’s retry ratio is above this (default 0.7)',
  retryRatioLow: 't_max halves when it is below this (default 0.5)',
};

export function readDslrBackoffOptions(options?: ProtocolOptions): DslrBackoffOptions {
  const reader = new OptionReader('dslr-backoff', options);
  const dslr = readDslrOptionsFrom(reader, { polling: false });
  const d = DSLR_PLUS_POLICY;
  const pollBackoff: PollBackoffPolicy = {
    initialNs: reader.number('pollBackoffInitialNs', d.initialNs, { min: 1 }),
    capMinNs: reader.number('pollBackoffCapMinNs', d.capMinNs, { min: 1 }),
    capMaxNs: reader.number('pollBackoffCapMaxNs', d.capMaxNs, { min: 1 }),
    jitterNs: reader.number('pollJitterNs', d.jitterNs, { min: 0 }),
    retuneNs: reader.number('retuneIntervalNs', d.retuneNs, { min: 1 }),
    highRatio: reader.number('retryRatioHigh', d.highRatio, { min: 0, max: 1 }),
    lowRatio: reader.number('retryRatioLow', d.lowRatio, { min: 0, max: 1 }),
  };
  reader.done();
  const problems = crossCheckDslrOptions(dslr).map((p) => p.replace(/^dslr /, 'dslr-backoff '));
  if (pollBackoff.capMinNs > pollBackoff.capMaxNs) problems.push('dslr-backoff option pollBackoffCapMinNs exceeds pollBackoffCapMaxNs');
  if (pollBackoff.lowRatio > pollBackoff.highRatio) problems.push('dslr-backoff option retryRatioLow exceeds retryRatioHigh');
  if (problems.length > 0) throw new ConfigError(problems);
  return { dslr, pollBackoff };
}

/** A DSLR client whose waiters poll with DSLR+'s truncated exponential backoff. */
export function createDslrBackoffClient(ports: ClientPorts, options: DslrBackoffOptions): DslrClient {
  const pacing = new TruncatedExponentialPacing(ports.clock, ports.random, options.pollBackoff);
  return new DslrClient(ports, options.dslr, pacing, 'dslr-backoff');
}

/**
 * DSLR's swarm options plus multi-slot tickets and more small counter limits: DSLR+'s backoff
 * paces the polls that let a frozen word's watchdog zero it, and only longer leases and frequent
 * resets bring that path within a small run (its sweep counts the zeroings).
 */
export function dslrBackoffSwarmOptions(random: Random): ProtocolOptions {
  const options = { ...dslrSwarmOptions(random), ...dslrMultiSlotOptions(random) };
  const smaller = random.next() < 0.5 ? [8, 16][random.int(2)]! : undefined;
  return options['counterLimit'] === undefined && smaller !== undefined ? { ...options, counterLimit: smaller } : options;
}

export const dslrBackoff: ProtocolDefinition = {
  id: 'dslr-backoff',
  recovery: { compute: { mechanism: 'lease', boundMs: 25, action: 'as dslr' } },
  // Live: as DSLR's (leases that outlast a contended hold over gRPC, ω near one live round trip).
  liveDefaults: { leaseNs: 200_000_000, waitUnitNs: 100_000 },
  swarm: { crashes: true, nodeKill: true, memoryRestart: true, partitions: true, flushedVerbs: true, pauses: 'beyond-lease', options: dslrBackoffSwarmOptions },
  summary: 'DSLR+ (DecLock’s baseline): DSLR with truncated exponential backoff between READ polls, adaptive cap',
  fabric: 'verbs',
  capabilities: [],
  entryBytes: 8,
  modes: ['shared', 'exclusive'],
  options: DSLR_BACKOFF_OPTION_HELP,
  lockResets: true,
  createClient: (ports, options) => createDslrBackoffClient(ports, readDslrBackoffOptions(options)),
};
