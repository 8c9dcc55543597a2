import type { MalformedInputCounter } from '@lockfabric/live';
import type { FaultInjector, Switch } from '@lockfabric/switch';
import { TotalsCounter } from '@lockfabric/telemetry';
import type { MetricsRegistry } from '@lockfabric/telemetry';
import type { PacketAdmission } from './admission.js';
import type { Dataplane } from './dataplane.js';
import type { EchoResponder } from './echo-responder.js';
import { programFacts } from '@lockfabric/lock-catalog';

export interface SwitchMetricsSources {
  readonly sw: Switch;
  readonly dataplane: Dataplane;
  readonly injector: FaultInjector;
  readonly malformed: MalformedInputCounter;
  readonly admission?: PacketAdmission;
  readonly echo?: EchoResponder;
}

/**
 * Registers the switch's Prometheus metrics and returns the function that refreshes them before a
 * scrape. The switch keeps plain counts (the hot path touches no registry); each scrape adds what
 * grew since the last one.
 */
export function registerSwitchMetrics(metrics: MetricsRegistry, sources: SwitchMetricsSources): () => void {
  const byType = new TotalsCounter(metrics.counter({ name: 'lockfabric_switch_packets_total', help: 'Packets into the switch program, by packet type', labelNames: ['type'] }), 'type');
  const byDecision = new TotalsCounter(
    metrics.counter({ name: 'lockfabric_switch_decisions_total', help: 'Switch program decisions (program label, else egress kinds)', labelNames: ['decision'] }),
    'decision',
  );
  const drops = new TotalsCounter(metrics.counter({ name: 'lockfabric_switch_drops_total', help: 'Packet copies that did not leave the switch, by reason', labelNames: ['reason'] }), 'reason');
  const faults = new TotalsCounter(metrics.counter({ name: 'lockfabric_switch_fault_effects_total', help: 'Copies affected by injected faults, by effect', labelNames: ['effect'] }), 'effect');
  const decodeErrors = new TotalsCounter(metrics.counter({ name: 'lockfabric_decode_errors_total', help: 'Malformed input dropped, by source', labelNames: ['source'] }), 'source');
  const egress = new TotalsCounter(metrics.counter({ name: 'lockfabric_switch_egress_copies_total', help: 'Packet copies sent to machines' }), undefined);
  const admissionDrops = new TotalsCounter(
    metrics.counter({ name: 'lockfabric_switch_admission_drops_total', help: 'Batches of epoch-stamped lock packets the admission fence refused, by reason (closed, stale-epoch)', labelNames: ['reason'] }),
    'reason',
  );
  const echoes = new TotalsCounter(metrics.counter({ name: 'lockfabric_switch_echoes_total', help: 'Requests answered on the echo subject (the transport floor bench measures)' }), undefined);
  const admissionEpoch = metrics.gauge({ name: 'lockfabric_switch_admission_epoch', help: 'Membership epoch the switch was last opened or closed with' });
  const admissionOpen = metrics.gauge({ name: 'lockfabric_switch_admission_open', help: '1 while the switch admits stamped lock packets' });
  const delayed = metrics.gauge({ name: 'lockfabric_switch_delayed_in_flight', help: 'Copies (egress) and packets (ingress) held back by delay or reorder faults' });
  // The register-memory report: fixed once the program is built, so set once.
  const description = sources.sw.describe();
  const facts = programFacts(sources.sw.program);
  metrics.gauge({ name: 'lockfabric_switch_register_bytes', help: 'Stateful register memory the program allocated, in bytes (as SwitchControl.Describe reports it)' }).set(undefined, description.registerBytes);
  const arrayBits = metrics.gauge({ name: 'lockfabric_switch_register_array_bits', help: 'Bits of each physical register array', labelNames: ['array'] });
  for (const array of description.arrays) arrayBits.set({ array: array.name }, array.bits);
  metrics.gauge({ name: 'lockfabric_switch_lock_count', help: 'Locks whose state the program keeps in registers (fisslock: ids below it are decided on the switch); 0 without per-lock state' }).set(undefined, facts.lockCount);
  return () => {
    const counters = sources.sw.counters();
    byType.update(counters.packetsByType);
    byDecision.update(counters.decisions);
    const stats = sources.dataplane.stats();
    drops.update(stats.dropsByReason);
    egress.update({ '': stats.copiesOut });
    delayed.set(undefined, stats.delayedInFlight);
    const faultStats = sources.injector.stats();
    const ingress = faultStats.ingress;
    faults.update({
      lost: faultStats.lost,
      duplicated: faultStats.duplicated,
      delayed: faultStats.delayed,
      reordered: faultStats.reordered,
      'ingress-lost': ingress.lost,
      'ingress-duplicated': ingress.duplicated,
      'ingress-delayed': ingress.delayed,
      'ingress-reordered': ingress.reordered,
    });
    decodeErrors.update(sources.malformed.bySource());
    if (sources.echo) echoes.update({ '': sources.echo.echoes });
    if (sources.admission) {
      admissionDrops.update(sources.admission.dropsByReason());
      admissionEpoch.set(undefined, Number(sources.admission.state.epoch));
      admissionOpen.set(undefined, sources.admission.state.open ? 1 : 0);
    }
  };
}
