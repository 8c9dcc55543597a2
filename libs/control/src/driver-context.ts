import type { Clock } from '@lockfabric/ports';
import type { ControlBus } from './bus.js';
import type { Logger, MalformedSink } from './logger.js';
import type { RecoveryBook } from './recovery-book.js';
import type { Subjects } from './subjects.js';

/** What every recovery driver of the control plane gets: the bus, its subjects, time, the books. */
export interface DriverContext {
  readonly bus: ControlBus;
  readonly subjects: Subjects;
  readonly logger: Logger;
  /** Every wait of a driver (settles, retries, polls) is a sleep on this clock. */
  readonly clock: Clock;
  readonly recoveries: RecoveryBook;
  readonly malformed: MalformedSink;
}
