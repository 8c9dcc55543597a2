import { loadConfig } from '@lockfabric/config';
import { ConfigError } from '@lockfabric/ports';
import { announceFissSwitch } from '@lockfabric/live';
import { runService } from '@lockfabric/service';
import { startSwitchDataplane } from './switch-dataplane.js';
import { createSwitchProgram } from './switch-program.js';

const ANNOUNCE_INTERVAL_MS = 1_000;

/**
 * A program this build lacks is a configuration error (exit 2) and must be reported before the
 * service tries NATS, so it is checked on the configuration before the runtime starts.
 */
function exitIfProgramUnavailable(): void {
  let program: string;
  try {
    program = loadConfig({ role: 'switch', argv: process.argv.slice(2), env: process.env }).switch.program;
  } catch {
    return; // runService reports configuration errors itself
  }
  try {
    createSwitchProgram(program);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`lockfabric switch: ${error.message}`);
    process.exit(2);
  }
}

exitIfProgramUnavailable();

/** switch-dataplane: hosts the pipeline program of one rack and its control API. */
await runService({
  role: 'switch',
  needsNats: true,
  start: async ({ config, logger, nc, subjects, metrics, clock }) => {
    if (!nc) throw new Error('switch-dataplane needs NATS');
    const service = await startSwitchDataplane({
      nc,
      subjects,
      rack: config.switch.rack,
      node: config.node.id,
      program: createSwitchProgram(config.switch.program),
      grpcPort: config.switch.grpcPort,
      logger,
      metrics,
      clock,
    });
    // The coordinator needs the control API for FissLock recovery (S3); repeating the announcement
    // lets a restarted coordinator learn it again within a second.
    const controlAddress = config.switch.controlAddress ?? `127.0.0.1:${String(service.endpoints['grpc'])}`;
    const announce = (): void => {
      announceFissSwitch(nc, subjects, config.switch.rack, controlAddress).catch((error: unknown) => logger.warn(`switch-dataplane: could not announce ${controlAddress}: ${String(error)}`));
    };
    announce();
    const timer = setInterval(announce, ANNOUNCE_INTERVAL_MS);
    return {
      ...service,
      close: async () => {
        clearInterval(timer);
        await service.close();
      },
    };
  },
});
