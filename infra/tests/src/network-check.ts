import { nameOf } from './kustomize.js';
import { podsOf } from './deploy-checks.js';
import type { Doc } from './yaml-docs.js';

/** One edge of the wire contract: pods of app `from` open TCP connections to app `to` on `port`. */
export interface Flow {
  readonly from: string;
  readonly to: string;
  readonly port: number;
}

interface Selector {
  matchLabels?: Record<string, string>;
}
interface Rule {
  from?: { podSelector?: Selector; namespaceSelector?: Selector }[];
  ports?: { port?: number | string }[];
}

const matches = (selector: Selector | undefined, labels: Readonly<Record<string, string>>) => Object.entries(selector?.matchLabels ?? {}).every(([k, v]) => labels[k] === v);

/**
 * Whether the NetworkPolicies admit a flow between pods in the same namespace: a pod no policy
 * selects admits everything; otherwise some selecting policy needs a rule admitting the source
 * pod's labels and the port.
 */
export function admits(objects: readonly Doc[], flow: Flow): boolean {
  const pods = podsOf(objects);
  const source = pods.find((p) => p.labels['app.kubernetes.io/name'] === flow.from);
  const target = pods.find((p) => p.labels['app.kubernetes.io/name'] === flow.to);
  if (!source || !target) throw new Error(`no pod for ${!source ? flow.from : flow.to}`);
  const policies = objects.filter((o) => o['kind'] === 'NetworkPolicy' && matches((o['spec'] as { podSelector?: Selector }).podSelector, target.labels));
  if (policies.length === 0) return true;
  return policies.some((policy) =>
    (((policy['spec'] as { ingress?: Rule[] }).ingress ?? []) as Rule[]).some(
      (rule) =>
        (rule.from === undefined || rule.from.some((peer) => (peer.podSelector === undefined || matches(peer.podSelector, source.labels)) && (peer.namespaceSelector === undefined || peer.podSelector !== undefined || true))) &&
        (rule.ports === undefined || rule.ports.some((p) => p.port === flow.port)),
    ),
  );
}

/** The flows that are required but denied, and the forbidden ones that are admitted. */
export function networkProblems(objects: readonly Doc[], required: readonly Flow[], forbidden: readonly Flow[]): string[] {
  return [
    ...required.filter((f) => !admits(objects, f)).map((f) => `denied: ${f.from} → ${f.to}:${f.port}`),
    ...forbidden.filter((f) => admits(objects, f)).map((f) => `admitted but not in the wire contract: ${f.from} → ${f.to}:${f.port}`),
  ];
}

export const policyNames = (objects: readonly Doc[]) => objects.filter((o) => o['kind'] === 'NetworkPolicy').map(nameOf);
