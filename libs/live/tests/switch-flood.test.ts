import type { NatsConnection } from '@nats-io/transport-node';
import type { LockPacket, NodeId } from '@lockfabric/ports';
import { encodePacketBatch } from '@lockfabric/wire';
import { afterEach, describe, expect, it } from 'vitest';
import { MalformedInputCounter } from '../src/malformed-input.js';
import { connectNats } from '../src/nats-connect.js';
import { createSubjects } from '../src/subjects.js';
import { SwitchIngress, SwitchLink } from '../src/switch-link.js';
import { memoryLogger, startNatsServer, waitFor } from './support.js';

/**
 * Switch ingress under a flood (docs/decisions/0006-bounded-ingress-under-floods.md): machine 1
 * publishes oversized batches of valid packets straight onto the rack's switch subject, as fast
 * as it can; machine 2 sends through its ordinary link. Real nats-server, real connections.
 */
const subjects = createSubjects('flood-test');
const BOUND = 64;
const FLOOD_BATCHES = 20;
const FLOOD_BATCH_PACKETS = 5000;

const packet = (machine: NodeId, seq: number): LockPacket => ({ type: 'acquire', lock: 7, machine, task: 1, mode: 'exclusive', incarnation: 1, seq, flags: 0 });

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function flood(maxBatchPackets: number) {
  const nats = await startNatsServer();
  cleanups.push(() => nats.stop());
  const connect = async (name: string): Promise<NatsConnection> => {
    const nc = await connectNats({ servers: nats.url, name, logger: memoryLogger() });
    cleanups.push(() => nc.close());
    return nc;
  };
  const [ncSwitch, ncFlooder, ncVictim] = await Promise.all([connect('switch'), connect('flooder'), connect('victim')]);
  // Per NATS message handled: how many of the flooder's packets ran in that one callback turn.
  const seen: NodeId[] = [];
  const ingress = new SwitchIngress({
    nc: ncSwitch,
    subjects,
    rack: 0,
    logger: memoryLogger(),
    malformed: new MalformedInputCounter({ logger: memoryLogger() }),
    maxBatchPackets,
    onPacket: (p, from) => void seen.push(from),
  });
  cleanups.push(() => ingress.close());
  const victim = new SwitchLink({ nc: ncVictim, subjects, machine: 2, rack: 0, logger: memoryLogger() });
  cleanups.push(() => victim.close());
  await ncSwitch.flush();

  const big = encodePacketBatch(Array.from({ length: FLOOD_BATCH_PACKETS }, (_, i) => packet(1, i)), 1);
  for (let i = 0; i < FLOOD_BATCHES / 2; i++) ncFlooder.publish(subjects.switchIn(0), big);
  await ncFlooder.flush();
  victim.send(packet(2, 0));
  victim.flush();
  await ncVictim.flush();
  for (let i = 0; i < FLOOD_BATCHES / 2; i++) ncFlooder.publish(subjects.switchIn(0), big);
  await ncFlooder.flush();
  await waitFor(() => ingress.stats().batchesReceived === FLOOD_BATCHES + 1, { timeoutMs: 60_000 });
  return { flooderBeforeVictim: seen.indexOf(2), stats: ingress.stats() };
}

describe('switch ingress under a flood from one machine', () => {
  it('handles at most the bound of one machine per message, so another machine waits for at most a bound per message ahead of it', async () => {
    const { flooderBeforeVictim, stats } = await flood(BOUND);
    expect(flooderBeforeVictim).toBeGreaterThanOrEqual(0);
    expect(flooderBeforeVictim).toBeLessThanOrEqual((FLOOD_BATCHES / 2) * BOUND);
    expect(stats.packetsReceived).toBe(FLOOD_BATCHES * BOUND + 1);
    expect(stats.oversizeDrops).toBe(FLOOD_BATCHES * (FLOOD_BATCH_PACKETS - BOUND));
  });

  it('catches an ingress without the per-message bound (mutant)', async () => {
    const { flooderBeforeVictim } = await flood(Number.MAX_SAFE_INTEGER);
    expect(flooderBeforeVictim).toBeGreaterThan((FLOOD_BATCHES / 2) * BOUND);
  });
});
