// Worker-thread entry of `check --swarm --workers N`: runs one seed per message.
import { serveJobs } from '../workers/pool.js';
import { runSwarmJob } from './jobs.js';

serveJobs(runSwarmJob);
