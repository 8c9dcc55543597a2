import { parseComputeNodes, parseLeaseBounds } from '@lockfabric/config';
import { runService } from '@lockfabric/service';
import { startCoordinator } from './coordinator.js';

/** coordinator: membership from heartbeats, failure detection, membership views with epochs. */
await runService({
  role: 'coordinator',
  needsNats: true,
  start: async ({ config, logger, nc, subjects, metrics, clock, telemetry }) => {
    return startCoordinator({
      nc,
      subjects,
      cluster: config.cluster,
      heartbeatIntervalMs: config.coordinator.heartbeatIntervalMs,
      missesBeforeSuspect: config.coordinator.missesBeforeSuspect,
      grpcPort: config.coordinator.grpcPort,
      racks: config.switch.racks,
      logger,
      metrics,
      clock,
      trace: telemetry.trace,
      ...(() => {
        const leaseBoundsMs = parseLeaseBounds(config.coordinator.leaseBoundsMs);
        return leaseBoundsMs ? { leaseBoundsMs } : {};
      })(),
      ...(() => {
        const expectedComputeNodes = parseComputeNodes(config.coordinator.computeNodes);
        return expectedComputeNodes ? { expectedComputeNodes } : {};
      })(),
    });
  },
});
