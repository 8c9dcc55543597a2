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
type ModelClass = { prototype: Validating };

/**
 * The generated models of the kinds LockFabric renders, keyed by `apiVersion/kind`. Their
 * validators are compiled from the Kubernetes OpenAPI document (kubernetes-models 4.5.1), so this
 * is the API server's own idea of a well-typed object, checked offline.
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

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Problems of one object against the Kubernetes schema of its kind: wrong types, missing required
 * fields, bad enum values, and — stricter than the published schemas, which let the API server
 * prune unknown fields — any field the schema does not declare (see {@link runTracked}). Also a
 * `metadata.name` that is not a DNS label, which the API server checks outside the schema.
 */
export function schemaProblems(o: Record<string, unknown>): string[] {
  const key = `${String(o['apiVersion'])}/${String(o['kind'])}`;
  const name = String((o['metadata'] as { name?: unknown } | undefined)?.name);
  const Model = MODELS[key];
  if (!Model) return [`${key} ${name}: no Kubernetes schema for this apiVersion/kind`];
  const problems: string[] = [];
  if (!DNS_LABEL.test(name) || name.length > 63) problems.push(`${key} ${name}: /metadata/name is not a DNS label`);
  const { error, unknown } = runTracked(o, (data) => Model.prototype.validate.call(data));
  if (error === undefined) return [...problems, ...unknown.map((path) => `${key} ${name}: ${path} is not a field of the Kubernetes API`)];
  const details = (error as { errors?: readonly { instancePath?: string; message?: string }[] }).errors;
  if (!details || details.length === 0) return [...problems, `${key} ${name}: ${error instanceof Error ? error.message : String(error)}`];
  return [...problems, ...details.map((d) => `${key} ${name}: ${d.instancePath || '/'} ${d.message ?? 'is invalid'}`)];
}

interface Visit {
  readonly path: string;
  readonly target: object;
  readonly read: Set<string>;
}

/**
 * Runs a compiled schema validator over `data` seen through proxies that record which keys the
 * validator reads on each object. A validator compiled from a schema with `properties` reads every
 * declared property name (present or not); one with `additionalProperties` (a map such as
 * `labels`) enumerates and reads every key. So a key present on an object the validator examined
 * but never read is a field that the schema does not declare, such as a misspelled
 * `initialDelaySecond`. Objects the validator never looked into (free-form fields) are not judged.
 * Unknown fields are only reported when validation passed: a failing validator may stop early.
 */
function runTracked(data: Record<string, unknown>, validate: (data: object) => void): { error: unknown; unknown: string[] } {
  const visits: Visit[] = [];
  const proxies = new WeakMap<object, object>();
  const track = <T extends object>(target: T, path: string): T => {
    const known = proxies.get(target);
    if (known) return known as T;
    const visit: Visit = { path, target, read: new Set() };
    visits.push(visit);
    const proxy = new Proxy(target, {
      get(t, property, receiver) {
        const value: unknown = Reflect.get(t, property, receiver);
        if (typeof property !== 'string') return value;
        visit.read.add(property);
        return typeof value === 'object' && value !== null ? track(value, `${path}/${property}`) : value;
      },
    });
    proxies.set(target, proxy);
    return proxy;
  };
  let error: unknown;
  try {
    validate(track(data, ''));
  } catch (e) {
    error = e;
  }
  const unknown: string[] = [];
  for (const { path, target, read } of visits) {
    if (Array.isArray(target) || read.size === 0) continue;
    for (const key of Object.keys(target)) if (!read.has(key)) unknown.push(`${path}/${key}`);
  }
  return { error, unknown };
}
