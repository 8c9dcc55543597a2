#!/usr/bin/env node
// NATS round trip and connect time, plaintext against TLS, in one run on this machine.
// Two nats-servers from the same binary, one with the `tls {}` block `cluster up` writes and a
// certificate from a fresh cluster CA; the samples alternate between them in small rounds so
// machine load hits both alike. Needs built dists (npm run build) and nats-server.
// Usage: node tools/scripts/nats-tls-rtt.mjs [--rounds N]   (default 40 rounds of 50 round trips)
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir, cpus } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { connect } from '@nats-io/transport-node';
import { startNatsServer } from '@lockfabric/testkit';
import { createClusterCa, issueNatsServerCertificate, natsServerTlsBlock } from '@lockfabric/workload-driver';

const roundsArg = process.argv.indexOf('--rounds');
const ROUNDS = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : 40;
if (!Number.isSafeInteger(ROUNDS) || ROUNDS < 1) {
  console.error('--rounds: expected a positive integer');
  process.exit(2);
}
const PER_ROUND = 50;
const PAYLOAD = new Uint8Array(256); // about a lock packet batch

const dir = mkdtempSync(join(tmpdir(), 'lf-nats-rtt-'));
const ca = createClusterCa(join(dir, 'tls'), 'rtt');
const server = issueNatsServerCertificate(ca, 'nats-server');
writeFileSync(join(dir, 'tls.conf'), natsServerTlsBlock(server));
const caPem = readFileSync(server.ca, 'utf8');
const plain = await startNatsServer();
const tls = await startNatsServer({ args: ['-c', join(dir, 'tls.conf')] });
const modes = [
  { name: 'plaintext', url: plain.url, options: {} },
  { name: 'TLS', url: tls.url, options: { tls: { ca: caPem } } },
];

const ms = (t0) => performance.now() - t0;
const samples = Object.fromEntries(modes.map((m) => [m.name, { connect: [], rtt: [] }]));
const load = [loadavg()[0]];
try {
  const conns = {};
  for (const m of modes) {
    conns[m.name] = await connect({ servers: m.url, ...m.options });
    const nc = conns[m.name];
    nc.subscribe('echo', { callback: (_e, msg) => msg.respond(msg.data) });
    await nc.flush();
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const m of round % 2 === 0 ? modes : [...modes].reverse()) {
      const t0 = performance.now();
      const fresh = await connect({ servers: m.url, ...m.options });
      samples[m.name].connect.push(ms(t0));
      await fresh.close();
      const nc = conns[m.name];
      for (let i = 0; i < PER_ROUND; i++) {
        const t1 = performance.now();
        await nc.request('echo', PAYLOAD, { timeout: 10_000 });
        samples[m.name].rtt.push(ms(t1) * 1000);
      }
    }
    if (round % 10 === 9) load.push(loadavg()[0]);
  }
  await Promise.all(Object.values(conns).map((nc) => nc.close()));
} finally {
  await plain.stop();
  await tls.stop();
  rmSync(dir, { recursive: true, force: true });
}

const q = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log(`NATS plaintext vs TLS, ${ROUNDS} alternating rounds; ${cpus().length} cores, load average ${load.map((l) => l.toFixed(1)).join(' → ')}`);
console.log('mode       request/reply 256 B µs (p50 / p90 / mean, n)      connect ms (p50 / p90, n)');
for (const m of modes) {
  const s = samples[m.name];
  console.log(`${m.name.padEnd(10)} ${q(s.rtt, 0.5).toFixed(0)} / ${q(s.rtt, 0.9).toFixed(0)} / ${mean(s.rtt).toFixed(0)}, ${s.rtt.length}`.padEnd(60) + `${q(s.connect, 0.5).toFixed(2)} / ${q(s.connect, 0.9).toFixed(2)}, ${s.connect.length}`);
}
