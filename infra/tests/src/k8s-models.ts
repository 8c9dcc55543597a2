import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Secret } from 'kubernetes-models/v1/Secret';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Service } from 'kubernetes-models/v1/Service';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';

interface Validating {
  validate(): void;
}
type ModelClass = new (data: never) => Validating;

/**
 * The generated models of the kinds LockFabric renders, keyed by `apiVersion/kind`. Their JSON
 * schemas come from the Kubernetes OpenAPI document (kubernetes-models 4.5, Kubernetes 1.3x), so
 * this is the API server's own idea of a well-typed object, checked offline.
 */
const MODELS: Readonly<Record<string, ModelClass>> = {
  'v1/Namespace': Namespace,
  'v1/Secret': Secret,
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'batch/v1/Job': Job,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
};

/** Kinds this validator knows, as `apiVersion/kind`. */
export const SCHEMA_KINDS: readonly string[] = Object.keys(MODELS);

/**
 * Problems of one object against the Kubernetes schema of its kind: wrong types, missing required
 * fields, bad enum values. The published schemas allow unknown fields (the API server prunes them),
 * so misspelled fields are caught by {@link validateObject}'s stricter shapes, which run as well.
 */
export function schemaProblems(o: Record<string, unknown>): string[] {
  const key = `${String(o['apiVersion'])}/${String(o['kind'])}`;
  const name = String((o['metadata'] as { name?: unknown } | undefined)?.name);
  const Model = MODELS[key];
  if (!Model) return [`${key} ${name}: no Kubernetes schema for this apiVersion/kind`];
  try {
    new Model(o as never).validate();
    return [];
  } catch (error) {
    const details = (error as { errors?: readonly { instancePath?: string; message?: string }[] }).errors;
    if (!details || details.length === 0) return [`${key} ${name}: ${error instanceof Error ? error.message : String(error)}`];
    return details.map((d) => `${key} ${name}: ${d.instancePath || '/'} ${d.message ?? 'is invalid'}`);
  }
}
