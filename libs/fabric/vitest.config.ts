import { projectTestConfig } from '../../vitest.shared.js';

// Footprint tests read process-wide ArrayBuffer bytes: no other test file's buffers may be
// collected in between, so each file gets a fresh worker.
export default projectTestConfig({ isolate: true });
