// The nemesis's fault actions on Kubernetes: each one is the kubectl plan `lockfabric chaos --kube-context` prints.
import { spawn } from 'node:child_process';
import { LockFabricError } from '@lockfabric/ports';
import type { SwitchFaultRequest } from '../chaos/chaos-request.js';
import type { ChaosRequest, ChaosVerb } from '../chaos/chaos-request.js';
import { PARTITION_LABEL, kubePlan, kubeSelector, kubectlOf } from '../chaos/kube-plan.js';
import type { ChaosOutcome } from '../chaos/local-chaos.js';

export class KubeActionError extends LockFabricError {
  readonly code = 'KUBE_ACTION';
}

export interface KubeTarget {
  readonly context: string;
  readonly namespace: string;
  /** Memory nodes before the compute node ids (compute-N is pod compute-node-(N − memoryNodes)). */
  readonly memoryNodes: number;
}

/** Runs shell lines with `set -e`; resolves with stdout, rejects naming the failing plan. Never blocks the event loop. */
export type ShellRunner = (lines: readonly string[]) => Promise<string>;

export const runShell: ShellRunner = (lines) =>
  new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', ['set -e', ...lines].join('\n')], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', (error) => reject(new KubeActionError(`could not run sh: ${error.message}`)));
    child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new KubeActionError(`kubectl plan failed (exit ${code}): ${stderr.trim().split('\n').slice(-2).join(' ') || lines[0]}`))));
  });

/**
 * The fault actions of `applyFault` on a Kubernetes cluster. A kill force-deletes the pod; its
 * StatefulSet or Deployment starts a replacement, so the restart that heals a kill only waits for
 * it to be Ready. Switch faults go through a port-forward to SwitchControl, run by this same CLI.
 */
export class KubeChaos {
  private readonly killed = new Set<string>();

  constructor(
    readonly kube: KubeTarget,
    private readonly shell: ShellRunner = runShell,
    /** How this CLI is invoked, for the switch-faults step of a plan. */
    private readonly self: string = `"${process.execPath}" "${process.argv[1] ?? 'lockfabric'}"`,
  ) {}

  /** The kubectl lines of one action, as `chaos --kube-context --dry-run` prints them. */
  plan(verb: ChaosVerb, target: string, extra: Partial<ChaosRequest> = {}): string[] {
    return kubePlan({ verb, target, dir: '', durationMs: 0, dryRun: false, json: false, kube: this.kube, ...extra });
  }

  kill(target: string): Promise<ChaosOutcome> {
    this.killed.add(target);
    return this.run('kill', target, this.plan('kill', target));
  }

  restart(target: string): Promise<ChaosOutcome> {
    if (!this.killed.delete(target)) return this.run('restart', target, this.plan('restart', target));
    return this.run('restart', target, [this.waitReady(kubeSelector(target, this.kube.memoryNodes))]);
  }

  pause(target: string): Promise<ChaosOutcome> {
    return this.run('pause', target, this.plan('pause', target));
  }

  resume(target: string): Promise<ChaosOutcome> {
    return this.run('resume', target, this.plan('resume', target));
  }

  partition(target: string, durationMs: number): Promise<ChaosOutcome> {
    return this.run('partition', target, this.plan('partition', target, { durationMs }));
  }

  natsRestart(): Promise<ChaosOutcome> {
    return this.run('nats-restart', 'nats', this.plan('nats-restart', 'nats'));
  }

  switchFaults(target: string, faults: SwitchFaultRequest): Promise<ChaosOutcome> {
    const lines = this.plan('switch-faults', target, { faults }).map((line) => line.replace(/^lockfabric chaos /, `${this.self} chaos `));
    return this.run('switch-faults', target, lines);
  }

  /**
   * After the run: every paused process resumed, partitions removed, every app pod Ready, switch
   * faults cleared. Best effort per step (a process that was never paused refuses nothing).
   */
  async healAll(targets: readonly string[]): Promise<string[]> {
    const done: string[] = [];
    for (const target of targets) {
      if (/^(?:compute|memory|coordinator|switch)/.test(target)) await this.resume(target).then((o) => done.push(o.detail), () => undefined);
    }
    const kubectl = kubectlOf(this.kube);
    await this.shell([`${kubectl} delete networkpolicy -l ${PARTITION_LABEL}=true --ignore-not-found`]).then(() => done.push('partitions removed'), () => undefined);
    await this.shell([`${kubectl} wait --for=condition=Ready pod -l app.kubernetes.io/component=lockfabric-app --timeout=120s`]).then(
      () => done.push('every app pod Ready'),
      (error: Error) => done.push(`not every app pod Ready: ${error.message}`),
    );
    if (targets.some((t) => t.startsWith('switch'))) await this.switchFaults('switch', { loss: 0, duplicate: 0, reorder: 0, delayNs: 0, clear: true }).then(() => done.push('switch faults cleared'), () => undefined);
    return done;
  }

  private waitReady(selector: string): string {
    return `${kubectlOf(this.kube)} wait --for=condition=Ready pod -l ${selector} --timeout=120s`;
  }

  private async run(verb: string, target: string, lines: string[]): Promise<ChaosOutcome> {
    await this.shell(lines);
    return { verb, target, pid: 0, detail: `${verb} ${target} on ${this.kube.context}/${this.kube.namespace} (${lines.length} kubectl step${lines.length === 1 ? '' : 's'})` };
  }
}
