export { freePort } from './free-port.js';
export { waitFor, WaitForTimeoutError, type WaitForOptions } from './wait-for.js';
export {
  findNatsServer,
  NatsServerNotFoundError,
  NatsServerStartError,
  startNatsServer,
  type NatsServerHandle,
  type NatsServerOptions,
} from './nats-server.js';
export { dyingPorts, type VerbName } from './dying-ports.js';
export {
  bytesTarget,
  fc,
  footprint,
  fuzzDecoder,
  FuzzFailure,
  fuzzRuns,
  mutated,
  untrustedBytes,
  violation,
  type DecoderTarget,
  type FuzzOptions,
  type FuzzResult,
} from './fuzz.js';
export { protoBytes, protoMessage } from './proto-arbitrary.js';
export { probePlaintextNats, type PlaintextProbe } from './nats-probe.js';
export { startRedisServer, type RedisServerHandle } from './redis-server.js';
export * from './otlp/index.js';
export { TestServerError } from './test-server-error.js';
