// The floor's text apart from its measurement, so that printing a bench report loads no transport.
import type { FloorReport, PhaseFloor } from '../run/transport-floor.js';
import type { RoundSpread } from '../run/floor-rounds.js';

/** One line for the table: "uncontended acquire p50 165 µs = 3.75× (1 verb × 44 µs gRPC)". */
export function describeFloor(floor: FloorReport): string {
  const unit = floor.transport === 'grpc' ? 'verb' : 'exchange';
  const via = floor.floorPath === 'nats-switch-echo' ? 'NATS via switch' : floor.floorPath === 'nats-in-cli' ? 'NATS in-CLI' : 'gRPC';
  const spread = (r: RoundSpread) => `${r.median}× (${r.min}–${r.max})`;
  const byRound = (p: PhaseFloor) => (p.roundRatioP50 && p.roundRatioMean ? `; by round ${spread(p.roundRatioP50)}, mean ${spread(p.roundRatioMean)}` : '');
  const part = (name: string, p: PhaseFloor) =>
    p.roundTrips === 0
      ? // A lock server's messages (rpc, traditional) are not this floor's round trips: no ratio.
        `${name} p50 ${p.p50Us.toFixed(1)} µs (mean ${p.meanUs.toFixed(1)}); no ${unit}s on its fast path, so no ratio to the ${via} floor`
      : `${name} p50 ${p.p50Us.toFixed(1)} µs (mean ${p.meanUs.toFixed(1)}) = ${p.ratioP50}× (mean ${p.ratioMean}×) of ${p.roundTrips.toFixed(2)} ${unit}${p.roundTrips === 1 ? '' : 's'} × ${floor.rttUs.toFixed(1)} µs (mean ${floor.rttMeanUs.toFixed(1)}) ${via}${byRound(p)}`;
  const echo = floor.switchEcho;
  const node = floor.memoryNode;
  const rounds = floor.rounds;
  const nic = floor.nicVsStream;
  return [
    `uncontended (${floor.operations} ops, one client): ${part('acquire', floor.acquire)}`,
    ...(floor.release ? [`  ${part('release', floor.release)}`] : []),
    ...(floor.operation ? [`  ${part('acquire+release', floor.operation)}`] : []),
    ...(rounds ? [`  ${rounds.count} rounds of floor then probe; ${via} p50 by round ${rounds.rttUs.map((us) => us.toFixed(1)).join(', ')} µs`] : []),
    `  floors p50/mean: gRPC ${floor.grpcRttUs.toFixed(1)}/${floor.grpcRttMeanUs.toFixed(1)} µs, NATS in-CLI ${floor.natsRttUs.toFixed(1)}/${floor.natsRttMeanUs.toFixed(1)} µs${echo ? `, NATS via switch ${echo.rttUs.toFixed(1)}/${echo.rttMeanUs.toFixed(1)} µs (${echo.exchanges} echoes)` : ''}`,
    ...(node ? [`  memory node ${Math.round(node.verbsPerSec)} verbs/s = ${node.ratio}× the bare stream to it (${Math.round(node.streamMsgsPerSec)} msgs/s)`] : []),
    ...(nic ? [`  in the run: ${nic.node} served ${Math.round(nic.nicIops)} verbs/s = ${nic.ratio}× the bare stream to it`] : []),
    ...(node?.cpuUsPerMessage ? [`    processor time per message, echo → verb: memory node ${node.cpuUsPerMessage.memory.echo} → ${node.cpuUsPerMessage.memory.verb} µs, this CLI ${node.cpuUsPerMessage.driver.echo} → ${node.cpuUsPerMessage.driver.verb} µs`] : []),
    ...(floor.cpuUsPerOperation ? [`  processor time per operation: compute nodes ${floor.cpuUsPerOperation.compute} µs, memory nodes ${floor.cpuUsPerOperation.memory} µs`] : []),
  ].join('\n');
}
