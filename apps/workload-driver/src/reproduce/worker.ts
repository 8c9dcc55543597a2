// Worker-thread entry of `reproduce --workers N`: measures one point per message.
import { parentPort } from 'node:worker_threads';
import type { PointJob } from './experiment.js';
import { measurePoint } from './measure.js';
import { errorMessage } from '@lockfabric/ports';

parentPort?.on('message', (job: PointJob) => {
  measurePoint(job).then(
    (measure) => parentPort?.postMessage({ ok: true, measure }),
    (error: unknown) => parentPort?.postMessage({ ok: false, error: errorMessage(error) }),
  );
});
