import { protocolById } from '@lockfabric/lock-catalog';
import { swarmMix, runSwarmMix } from '@lockfabric/harness';
import { summarizeVerdict } from '@lockfabric/check';
const base = protocolById('alock');
const p = { ...base, swarm: { ...base.swarm, nodeKill: true } };
for (const seed of process.argv.slice(2).map(Number)) {
  const mix = swarmMix(p, seed, {});
  const r = await runSwarmMix(p, mix);
  console.log(mix.description);
  console.log(summarizeVerdict(r.verdict, 4), r.nodeFailure, JSON.stringify(r.control?.deaths));
}
