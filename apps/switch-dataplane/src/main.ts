import { loadConfig } from '@lockfabric/config';
import type { Config } from '@lockfabric/config';
import { ConfigError } from '@lockfabric/ports';
import { announceSwitchControl } from '@lockfabric/live';
import { runService } from '@lockfabric/service';
import { startSwitchDataplane } from './switch-dataplane.js';
import { createSwitchProgram } from './switch-program.js';
import { programSettingsOf } from './switch-program-settings.js';
import type { ProgramSettingsRead } from './switch-program-settings.js';

const ANNOUNCE_INTERVAL_MS = 1_000;

function exitOnConfigError(error: unknown): never {
  if (!(error instanceof ConfigError)) throw error;
  console.error(`lockfabric switch: ${error.message}`);
  process.exit(2);
}

const argv = process.argv.slice(2);
const env = process.env;

/**
 * A program this build lacks, or settings it cannot take (a lock count past the MAU capacity,
 * fisslock settings for another program), are configuration errors (exit 2) and must be reported
 * before the service tries NATS, so they are checked before the runtime starts.
 */
function readProgramSettings(): ProgramSettingsRead {
  let config: Config['switch'];
  try {
    config = loadConfig({ role: 'switch', argv, env }).switch;
  } catch {
    return { settings: {}, described: [] }; // runService reports configuration errors itself
  }
  try {
    const read = programSettingsOf(config);
    createSwitchProgram(config.program, read.settings);
    return read;
  } catch (error) {
    exitOnConfigError(error);
  }
}

const { settings, described } = readProgramSettings();

/** switch-dataplane: hosts the pipeline program of one rack and its control API. */
await runService({
  role: 'switch',
  needsNats: true,
  argv,
  env,
  start: async ({ config, logger, nc, subjects, metrics, clock }) => {
    if (described.length > 0) logger.info(`program settings: ${described.join(', ')}`);
    const service = await startSwitchDataplane({
      nc,
      subjects,
      rack: config.switch.rack,
      node: config.node.id,
      program: createSwitchProgram(config.switch.program, settings),
      grpcPort: config.switch.grpcPort,
      logger,
      metrics,
      clock,
    });
    // The coordinator needs the control API for FissLock recovery (S3); repeating the announcement
    // lets a restarted coordinator learn it again within a second.
    const controlAddress = config.switch.controlAddress ?? `127.0.0.1:${String(service.endpoints['grpc'])}`;
    const announce = (): void => {
      announceSwitchControl(nc, subjects, config.switch.rack, controlAddress).catch((error: unknown) => logger.warn(`switch-dataplane: could not announce ${controlAddress}: ${String(error)}`));
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
