import type { MetricsRegistry } from '@lockfabric/telemetry';
import { LockAdmin } from './lock-admin-service.js';
import type { LockAdminDeps } from './lock-admin-service.js';

/** The coordinator's LockAdmin, counting each finished operation by action, protocol and outcome. */
export function lockAdminService(metrics: MetricsRegistry, deps: Omit<LockAdminDeps, 'onDone'>): LockAdmin {
  const done = metrics.counter({ name: 'lockfabric_coordinator_lock_admin_total', help: 'Planned lock resets and drains done by the coordinator', labelNames: ['action', 'protocol', 'outcome'] });
  const seconds = metrics.histogram({ name: 'lockfabric_coordinator_lock_admin_seconds', help: 'Time of planned lock resets and drains', labelNames: ['action'], buckets: [0.001, 0.01, 0.1, 1, 10] });
  return new LockAdmin({ ...deps, onDone: (e) => {
    done.inc({ action: e.action, protocol: e.protocol, outcome: e.outcome });
    seconds.observe({ action: e.action }, e.tookNs / 1e9);
  } });
}
