export { createSubjects, SubjectTokenError, type Subjects } from './subjects.js';
export { announceSwitchControl, announceLockTable } from './lock-table-announce.js';
export { consoleLogger, silentLogger, type Logger } from './logger.js';
export { RateLimitedLog, type RateLimitOptions } from './rate-limited-log.js';
export { MalformedInputCounter, type MalformedInputOptions } from './malformed-input.js';
export {
  connectNats,
  configureProcessNats,
  describeNatsStatus,
  natsAuthOptions,
  natsTlsOptions,
  processNatsTlsOn,
  NatsPermissionViolations,
  processNatsViolations,
  readNatsCa,
  readNkeySeed,
  resolveNatsCa,
  resolveNkeySeed,
  STANDARD_NATS_CA_FILE,
  STANDARD_NATS_SEED_FILE,
  type NatsConnectOptions,
} from './nats-connect.js';
export { TRACEPARENT_HEADER, traceFromHeaders, tracePublishOptions } from './trace-header.js';
export { MailboxHub, type MailboxHubOptions, type MailboxHubStats } from './mailbox-hub.js';
export {
  DEFAULT_MAX_BATCH_PACKETS,
  SwitchIngress,
  SwitchLink,
  type BatchAdmit,
  type PacketLinkStats,
  type SwitchIngressOptions,
  type SwitchLinkOptions,
} from './switch-link.js';
export { grpcPath, rawMethod, rawMethodOf, toBuffer, type RawMethod } from './grpc-raw.js';
export { memoryDescriptionFromWire, memoryDescriptionToWire, type MemoryDescription } from './memory-description.js';
export {
  startMemoryServer,
  type ExecuteContext,
  type MemoryExecutor,
  type MemoryServer,
  type MemoryServerOptions,
  type MemoryServerStats,
} from './memory-server.js';
export { DoorbellAnswerer, type AnswerCounters, type DoorbellAnswererOptions } from './memory-answer.js';
export { MemoryQueuePair, rebindDelayMs, type MemoryQueuePairOptions, type MemoryQueuePairStats, type RebindPolicy } from './memory-client.js';
export {
  grpcRoundTripStats,
  grpcRoundTripUs,
  grpcStreamThroughput,
  memoryNodeVerbThroughput,
  natsPubSubThroughput,
  natsEchoRoundTripStats,
  natsRoundTripStats,
  natsRoundTripUs,
  openGrpcRoundTrips,
  openNatsEchoRoundTrips,
  openNatsRoundTrips,
  roundTripStats,
  startEchoServer,
  TransportProbeTimeoutError,
  type EchoServer,
  type NatsBenchOptions,
  type RoundTripOptions,
  type RoundTripSession,
  type RoundTripStats,
  type ThroughputOptions,
} from './raw-transport.js';
export { startHealthServer, type HealthServer, type HealthServerOptions } from './health-server.js';
export { startHeartbeat, type HeartbeatOptions, type HeartbeatPublisher } from './heartbeat.js';
export { NatsControlBus } from './nats-control-bus.js';
export { GrpcCallError, UnaryClient, grpcError, unaryHandler, type GrpcError, type UnaryOptions } from './grpc-unary.js';
export { SwitchControlClient } from './switch-control-client.js';
export { FenceTable, fencedDetail, refuseFenced, type Fence, type FenceTableOptions, type ViewMember } from './fence-table.js';
export { followFences, type FenceFeed, type FenceFeedOptions } from './fence-feed.js';
export * from './tls/index.js';
export { MUTANT_KEEP_OLD_RUN_VERBS_OPTION, MUTANT_LOCAL_VERBS_OPTION, SKIP_RELEASE_OPTION, hostRunOptions, type HostRunOptions } from './run-options.js';
