import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fromBinary } from '@bufbuild/protobuf';
import { ConfigError } from '@lockfabric/ports';
import { FaultDirection, PacketType, SetFaultsRequestSchema } from '@lockfabric/wire';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { chaosCommand, parseChaosArgs } from '../commands/chaos.js';
import { kubePlan as kubePlanOf } from './kube-plan.js';
import { ChaosTargetError, LocalChaos } from './local-chaos.js';
import { setFaultsRequest } from './switch-faults.js';

const dry = (...argv: string[]) => parseChaosArgs([...argv, '--kube-context', 'lab', '--dry-run']);

function problemsOf(argv: string[]): string[] {
  try {
    parseChaosArgs(argv);
  } catch (error) {
    if (error instanceof ConfigError) return [...error.issues];
    throw error;
  }
  throw new Error(`accepted ${argv.join(' ')}`);
}

async function printed(argv: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line));
  try {
    return { code: await chaosCommand(argv), out: lines.join('\n') };
  } finally {
    log.mockRestore();
  }
}

afterEach(() => vi.restoreAllMocks());

describe('lockfabric chaos: arguments', () => {
  it('reads a local action with its directory', () => {
    expect(parseChaosArgs(['kill', 'compute-2', '--dir', '/tmp/c'])).toMatchObject({ verb: 'kill', target: 'compute-2', dir: '/tmp/c', dryRun: false });
    expect(parseChaosArgs(['nats-restart'])).toMatchObject({ verb: 'nats-restart', target: 'nats' });
    expect(parseChaosArgs(['partition', 'memory-0', '--duration-ms', '750'])).toMatchObject({ verb: 'partition', durationMs: 750 });
    expect(parseChaosArgs(['switch-faults', 'switch-3', '--loss', '0.25', '--packet-type', 'grant', '--machine', '4']).faults).toStrictEqual({
      loss: 0.25,
      duplicate: 0,
      reorder: 0,
      delayNs: 0,
      packetType: 'grant',
      machine: 4,
      clear: false,
    });
    expect(parseChaosArgs(['switch-faults', '--loss', '0.1', '--direction', 'both', '--delay-ns', '1000', '--delay-max-ns', '50000']).faults).toMatchObject({
      direction: 'both',
      delayNs: 1_000,
      delayMaxNs: 50_000,
    });
  });

  it('rejects an unknown fault direction and an upside-down delay range', () => {
    expect(problemsOf(['switch-faults', '--loss', '0.1', '--direction', 'sideways'])).toContain('lockfabric chaos: --direction: one of egress, ingress, both, got "sideways"');
    expect(problemsOf(['switch-faults', '--delay-ns', '500', '--delay-max-ns', '100'])).toContain('lockfabric chaos: --delay-max-ns: the top of the delay range must be at least --delay-ns (500), got 100');
    expect(problemsOf(['kill', 'compute-1', '--direction', 'ingress'])[0]).toContain('--direction apply to switch-faults only');
  });

  it('rejects unknown verbs, bad targets and misplaced flags, listing every problem at once', () => {
    expect(problemsOf(['explode', 'compute-1'])).toStrictEqual(['lockfabric chaos: unknown verb "explode": one of kill, pause, resume, restart, partition, switch-faults, nats-restart']);
    expect(problemsOf(['kill'])[0]).toContain('kill needs a target process');
    expect(problemsOf(['kill', 'compute-x'])[0]).toContain('is not a process name');
    expect(problemsOf(['kill', 'compute.1.*'])[0]).toContain('is not a process name');
    expect(problemsOf(['nats-restart', 'compute-1'])[0]).toContain('its target can only be nats');
    const many = problemsOf(['pause', 'compute-1', 'extra', '--loss', '2', '--duration-ms', '0', '--dry-run']);
    expect(many).toHaveLength(5);
    expect(many.join('\n')).toMatch(/unexpected arguments: extra/);
    expect(many.join('\n')).toMatch(/--duration-ms: expected an integer ≥ 1/);
    expect(many.join('\n')).toMatch(/--loss apply to switch-faults only/);
    expect(many.join('\n')).toMatch(/--dry-run .* needs --kube-context/);
  });

  it('checks switch faults: probabilities, packet types, and either faults or --clear', () => {
    expect(problemsOf(['switch-faults', '--loss', '1.5'])).toContain('lockfabric chaos: --loss: expected a number ≥ 0 ≤ 1, got "1.5"');
    expect(problemsOf(['switch-faults', '--loss', '0.1', '--packet-type', 'bogus'])[0]).toContain('--packet-type: one of acquire');
    expect(problemsOf(['switch-faults'])[0]).toContain('needs --loss, --duplicate, --reorder or --delay-ns (or --clear)');
    expect(problemsOf(['switch-faults', '--clear', '--delay-ns', '5'])[0]).toContain('cannot be combined');
    expect(problemsOf(['switch-faults', 'compute-1', '--clear'])[0]).toContain('needs a switch target');
    expect(problemsOf(['switch-faults', '--clear', '--switch-grpc', 'nowhere'])[0]).toContain('--switch-grpc: expected host:port');
  });

  it('checks partial-partition subjects: partition only, NATS patterns, local only', () => {
    expect(parseChaosArgs(['partition', 'compute-2', '--subjects', 'ctl.fiss.2.>, ctl.dslr.*'])).toMatchObject({ verb: 'partition', subjects: ['ctl.fiss.2.>', 'ctl.dslr.*'] });
    expect(parseChaosArgs(['partition', 'compute-2']).subjects).toBeUndefined();
    expect(problemsOf(['kill', 'compute-2', '--subjects', 'ctl.>'])[0]).toContain('--subjects applies to partition only');
    expect(problemsOf(['partition', 'compute-2', '--subjects', 'ctl.>.x'])[0]).toContain('is not a NATS subject pattern');
    expect(problemsOf(['partition', 'compute-2', '--subjects', 'ctl.>', '--kube-context', 'lab'])[0]).toContain('local cluster with the cut proxy only');
  });

  it('checks the Kubernetes flags', () => {
    expect(problemsOf(['kill', 'compute-1', '--namespace', 'x'])[0]).toContain('--namespace applies with --kube-context only');
    expect(problemsOf(['kill', 'compute-1', '--kube-context', 'lab', '--namespace', 'Bad_NS'])[0]).toContain('is not a Kubernetes namespace name');
  });

  it('a usage error is a ConfigError the CLI maps to exit 2; no arguments print the help with exit 2', async () => {
    await expect(chaosCommand(['kill'])).rejects.toBeInstanceOf(ConfigError);
    const help = await printed([]);
    expect(help.code).toBe(2);
    expect(help.out).toContain('lockfabric chaos <verb> <target>');
  });
});

describe('lockfabric chaos --kube-context --dry-run', () => {
  it('kill force-deletes the pod of the node: compute node N is pod compute-node-(N - memory nodes)', async () => {
    const { code, out } = await printed(['kill', 'compute-2', '--kube-context', 'lab', '--dry-run']);
    expect(code).toBe(0);
    expect(out).toBe('kubectl --context lab -n lockfabric delete pod -l statefulset.kubernetes.io/pod-name=compute-node-1 --grace-period=0 --force --wait=false');
    const bench = await printed(['kill', 'compute-2', '--kube-context', 'lab', '--memory-nodes', '2', '--dry-run']);
    expect(bench.out).toContain('pod-name=compute-node-0 ');
    const byPod = await printed(['kill', 'compute-node-3', '--kube-context', 'lab', '--dry-run']);
    expect(byPod.out).toContain('pod-name=compute-node-3 ');
  });

  it('a compute id below the memory nodes is refused with exit 2', async () => {
    await expect(chaosCommand(['kill', 'compute-1', '--kube-context', 'lab', '--memory-nodes', '2', '--dry-run'])).rejects.toBeInstanceOf(ConfigError);
  });

  it('pause and resume signal the service process inside the container', () => {
    const pod = '$(kubectl --context lab -n lockfabric get pod -l statefulset.kubernetes.io/pod-name=memory-node-0 -o name)';
    expect(printedPlan('pause', 'memory-0')).toStrictEqual([`kubectl --context lab -n lockfabric exec ${pod} -c lockfabric -- sh -c 'kill -STOP $(pidof node)'`]);
    expect(printedPlan('resume', 'memory-0')).toStrictEqual([`kubectl --context lab -n lockfabric exec ${pod} -c lockfabric -- sh -c 'kill -CONT $(pidof node)'`]);
  });

  it('restart deletes gracefully and waits for the replacement; nats-restart does the same to NATS', () => {
    expect(printedPlan('restart', 'switch-4')).toStrictEqual([
      'kubectl --context lab -n lockfabric delete pod -l app.kubernetes.io/name=switch-dataplane --wait=true',
      'kubectl --context lab -n lockfabric wait --for=condition=Ready pod -l app.kubernetes.io/name=switch-dataplane --timeout=120s',
    ]);
    expect(printedPlan('nats-restart')[0]).toBe('kubectl --context lab -n lockfabric delete pod -l app.kubernetes.io/name=nats --wait=true');
  });

  it('partition applies a deny-all NetworkPolicy for the duration, then deletes it', async () => {
    const { out } = await printed(['partition', 'compute-3', '--duration-ms', '1500', '--kube-context', 'prod-eu', '--namespace', 'lf-test', '--dry-run', '--json']);
    const plan = JSON.parse(out) as { verb: string; commands: string[] };
    expect(plan.verb).toBe('partition');
    expect(plan.commands).toHaveLength(3);
    expect(plan.commands[0]).toMatch(/^kubectl --context prod-eu -n lf-test apply -f - <<'EOF'\n/);
    expect(plan.commands[0]).toContain('kind: NetworkPolicy');
    expect(plan.commands[0]).toContain('name: lockfabric-partition-compute-3');
    expect(plan.commands[0]).toContain('statefulset.kubernetes.io/pod-name: compute-node-2');
    expect(plan.commands[0]).toContain('lockfabric.io/partition: "true"');
    expect(plan.commands[0]).toContain('policyTypes: [Ingress, Egress]');
    expect(plan.commands[1]).toBe('sleep 1.500');
    expect(plan.commands[2]).toBe('kubectl --context prod-eu -n lf-test delete networkpolicy lockfabric-partition-compute-3');
  });

  it('switch-faults port-forwards SwitchControl and calls this command through it', () => {
    const plan = printedPlan('switch-faults', '--loss', '0.1', '--delay-ns', '2000', '--packet-type', 'release');
    expect(plan[0]).toContain('port-forward $(kubectl --context lab -n lockfabric get pod -l app.kubernetes.io/name=switch-dataplane -o name) 15053:grpc');
    expect(plan[2]).toBe('lockfabric chaos switch-faults --switch-grpc 127.0.0.1:15053 --loss 0.1 --delay-ns 2000 --packet-type release');
    expect(printedPlan('switch-faults', '--delay-ns', '1000', '--delay-max-ns', '9000', '--direction', 'ingress')[2]).toBe(
      'lockfabric chaos switch-faults --switch-grpc 127.0.0.1:15053 --delay-ns 1000 --delay-max-ns 9000 --direction ingress',
    );
    expect(printedPlan('switch-faults', '--clear')[2]).toBe('lockfabric chaos switch-faults --switch-grpc 127.0.0.1:15053 --clear');
  });

  it('quotes a context name the shell would interpret', () => {
    expect(printedPlan('kill', 'nats', '--kube-context', "it's; rm")[0]).toMatch(/^kubectl --context 'it'\\''s; rm' -n/);
  });
});

describe('switch faults on the wire', () => {
  it('encodes one spec for every switch, or none to clear', () => {
    const set = fromBinary(SetFaultsRequestSchema, setFaultsRequest({ loss: 0.5, duplicate: 0, reorder: 0.1, delayNs: 7, packetType: 'ack', machine: 2, clear: false }));
    expect(set.faults).toHaveLength(1);
    expect(set.faults[0]).toMatchObject({ target: '', loss: 0.5, reorder: 0.1, delayNs: 7n, packetType: PacketType.ACK, machine: 2 });
    expect(fromBinary(SetFaultsRequestSchema, setFaultsRequest({ loss: 0, duplicate: 0, reorder: 0, delayNs: 0, clear: true })).faults).toStrictEqual([]);
    // without --direction, egress: what the switch did before ingress faults existed
    expect(set.faults[0]?.direction).toBe(FaultDirection.EGRESS);
    const ranged = fromBinary(SetFaultsRequestSchema, setFaultsRequest({ loss: 0, duplicate: 0, reorder: 0, delayNs: 1_000, delayMaxNs: 50_000, direction: 'ingress', clear: false }));
    expect(ranged.faults[0]).toMatchObject({ delayNs: 1_000n, delayMaxNs: 50_000n, direction: FaultDirection.INGRESS });
  });
});

describe('local chaos without a cluster', () => {
  it('names the missing cluster and unknown or dead targets', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lf-chaos-'));
    try {
      await expect(new LocalChaos(dir).kill('compute-1')).rejects.toThrow(ChaosTargetError);
      writeFileSync(
        join(dir, 'cluster.json'),
        JSON.stringify({ cluster: 'x', natsUrl: 'nats://127.0.0.1:1', startedAt: '', processes: [{ name: 'compute-1', role: 'compute', node: 1, pid: 2 ** 22 + 17, log: 'l', argv: ['true'] }] }),
      );
      await expect(new LocalChaos(dir).pause('compute-9')).rejects.toThrow(/no process "compute-9" .* there are: compute-1/);
      await expect(new LocalChaos(dir).pause('compute-1')).rejects.toThrow(/is not running; nothing to pause/);
      await expect(new LocalChaos(dir).natsRestart()).rejects.toThrow(/external NATS/);
      vi.spyOn(console, 'error').mockImplementation(() => undefined);
      expect(await chaosCommand(['kill', 'compute-1', '--dir', dir])).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function printedPlan(...argv: string[]): string[] {
  const request = argv.includes('--kube-context') ? parseChaosArgs([...argv, '--dry-run']) : dry(...argv);
  return kubePlanOf(request);
}
