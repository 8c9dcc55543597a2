import { LockFabricError } from '@lockfabric/ports';

/** A scenario was given a protocol or a cluster it cannot be staged on (a missing service, no manager). */
export class ScenarioSetupError extends LockFabricError {
  readonly code = 'SCENARIO_SETUP';
  constructor(
    readonly scenario: string,
    detail: string,
  ) {
    super(`${scenario}: ${detail}`);
  }
}
