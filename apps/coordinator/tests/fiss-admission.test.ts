import { fromBinary } from '@bufbuild/protobuf';
import type { NatsConnection } from '@nats-io/transport-node';
import { RecoveryBook } from '@lockfabric/control';
import { DECIDER_INITIAL_VALUES, protocolRecoveries } from '@lockfabric/lock-catalog';
import { startFissRecoveryHook } from '@lockfabric/lock-catalog-control';
import type { FissRecoveryHook } from '@lockfabric/lock-catalog-control';
import { MalformedInputCounter, NatsControlBus, connectNats, createSubjects } from '@lockfabric/live';
import { RealClock } from '@lockfabric/realtime';
import { FissSwitchAdmissionSchema } from '@lockfabric/wire';
import type { FissSwitchAdmission } from '@lockfabric/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GrpcDeciderControl } from '../src/switch-control/grpc-decider-control.js';
import { memoryLogger, startNatsServer, waitFor, type NatsServerHandle } from './support.js';

const subjects = createSubjects('admission-test');

describe('the coordinator opens switches to epoch-stamped lock packets (switch-dataplane "Admission")', () => {
  let nats: NatsServerHandle;
  let nc: NatsConnection;
  let hook: FissRecoveryHook;
  const seen: FissSwitchAdmission[] = [];

  beforeAll(async () => {
    nats = await startNatsServer();
    nc = await connectNats({ servers: nats.url, name: 'admission-test', logger: memoryLogger() });
    nc.subscribe(subjects.switchAdmission(), { callback: (error, msg) => void (error ? undefined : seen.push(fromBinary(FissSwitchAdmissionSchema, msg.data))) });
    await nc.flush();
    const logger = memoryLogger();
    hook = startFissRecoveryHook({
      bus: new NatsControlBus(nc),
      subjects,
      switchControl: (address) => new GrpcDeciderControl(address, DECIDER_INITIAL_VALUES),
      logger,
      clock: new RealClock(),
      recoveries: new RecoveryBook({ protocols: protocolRecoveries() }),
      malformed: new MalformedInputCounter({ logger }),
      epoch: () => 42n,
      liveComputeNodes: () => [],
      announceWaitMs: 200,
    });
  });
  afterAll(async () => {
    hook?.close();
    await nc?.close();
    await nats?.stop();
  });

  it('a switch seen for the first time is opened at the current epoch; a recovery that does not apply opens without raising the epoch', async () => {
    hook.switchJoined({ id: '7', node: 7, incarnation: 1n });
    await waitFor(() => seen.length === 1, { what: 'the first admission' });
    expect(seen[0]).toMatchObject({ node: 7, epoch: 42n, open: true });
    // no switch has announced a control address within the wait: FissLock is not in use, nothing is closed
    hook.computeDead({ id: '3', node: 3, incarnation: 1n });
    await hook.idle();
    await waitFor(() => seen.length === 2, { what: 'the second admission' });
    expect(seen[1]).toMatchObject({ node: 0, epoch: 0n, open: true });
    expect(hook.admissions.map((a) => a.open)).toStrictEqual([true, true]);
  });
});
