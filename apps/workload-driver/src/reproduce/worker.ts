// Worker-thread entry of `reproduce --workers N`: measures one point per message.
import { serveJobs } from '../workers/pool.js';
import { measurePoint } from './measure.js';

serveJobs(measurePoint);
