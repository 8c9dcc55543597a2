// Generated schemas (proto/lockfabric/v1). Their message and enum names follow the protos, so some
// match port names (WorkRequest, LockPacket, Message, ...): import those under an alias.
export * from './gen/lockfabric/v1/common_pb.js';
export * from './gen/lockfabric/v1/verbs_pb.js';
export * from './gen/lockfabric/v1/packet_pb.js';
export * from './gen/lockfabric/v1/message_pb.js';
export * from './gen/lockfabric/v1/control_pb.js';
export * from './gen/lockfabric/v1/driver_pb.js';
export * from './gen/lockfabric/v1/lock_admin_pb.js';
export * from './codec.js';
export * from './varint.js';
