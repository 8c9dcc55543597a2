import { LockFabricError } from '@lockfabric/ports';

/** A server a test started (redis-server, a throwaway listener, the OTLP receiver) failed it. */
export class TestServerError extends LockFabricError {
  readonly code = 'TEST_SERVER';
  constructor(message: string) {
    super(message);
    this.name = 'TestServerError';
  }
}
