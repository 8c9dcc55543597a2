/**
 * Offline structural validation of the Kubernetes objects LockFabric ships. No Kubernetes JSON
 * schema package is installed here, so this encodes, from the Kubernetes API reference, the
 * fields of the kinds and sub-objects we use, strictly: an unknown or misspelled field, a wrong
 * type or a missing required field is an error, as `kubeconform -strict` would report it.
 */
type Shape = 'string' | 'int' | 'bool' | 'int-or-string' | 'quantity' | 'any-map' | ObjectShape | ListShape | MapShape;
interface ObjectShape {
  readonly fields: Readonly<Record<string, Shape>>;
  readonly required?: readonly string[];
}
interface ListShape {
  readonly list: Shape;
}
interface MapShape {
  readonly map: Shape;
}

const obj = (fields: Record<string, Shape>, required: string[] = []): ObjectShape => ({ fields, required });
const list = (item: Shape): ListShape => ({ list: item });
const map = (value: Shape): MapShape => ({ map: value });
const stringMap = map('string');

const metadata = obj({ name: 'string', namespace: 'string', labels: stringMap, annotations: stringMap }, ['name']);
const labelSelector = obj({
  matchLabels: stringMap,
  matchExpressions: list(obj({ key: 'string', operator: 'string', values: list('string') }, ['key', 'operator'])),
});
const probe = obj({
  httpGet: obj({ path: 'string', port: 'int-or-string', scheme: 'string' }, ['port']),
  tcpSocket: obj({ port: 'int-or-string' }, ['port']),
  exec: obj({ command: list('string') }),
  initialDelaySeconds: 'int',
  periodSeconds: 'int',
  timeoutSeconds: 'int',
  failureThreshold: 'int',
  successThreshold: 'int',
});
const envVar = obj(
  {
    name: 'string',
    value: 'string',
    valueFrom: obj({
      secretKeyRef: obj({ name: 'string', key: 'string', optional: 'bool' }, ['key']),
      configMapKeyRef: obj({ name: 'string', key: 'string', optional: 'bool' }, ['key']),
      fieldRef: obj({ fieldPath: 'string', apiVersion: 'string' }, ['fieldPath']),
    }),
  },
  ['name'],
);
const container = obj(
  {
    name: 'string',
    image: 'string',
    command: list('string'),
    args: list('string'),
    env: list(envVar),
    ports: list(obj({ name: 'string', containerPort: 'int', protocol: 'string' }, ['containerPort'])),
    readinessProbe: probe,
    livenessProbe: probe,
    startupProbe: probe,
    resources: obj({ requests: map('quantity'), limits: map('quantity') }),
    securityContext: obj({
      allowPrivilegeEscalation: 'bool',
      readOnlyRootFilesystem: 'bool',
      runAsNonRoot: 'bool',
      runAsUser: 'int',
      runAsGroup: 'int',
      privileged: 'bool',
      capabilities: obj({ drop: list('string'), add: list('string') }),
    }),
    volumeMounts: list(obj({ name: 'string', mountPath: 'string', readOnly: 'bool', subPath: 'string' }, ['name', 'mountPath'])),
  },
  ['name'],
);
const podSpec = obj(
  {
    containers: list(container),
    restartPolicy: 'string',
    automountServiceAccountToken: 'bool',
    terminationGracePeriodSeconds: 'int',
    securityContext: obj({ runAsNonRoot: 'bool', runAsUser: 'int', runAsGroup: 'int', fsGroup: 'int', seccompProfile: obj({ type: 'string' }, ['type']) }),
    volumes: list(
      obj(
        {
          name: 'string',
          configMap: obj({ name: 'string', items: list(obj({ key: 'string', path: 'string' })) }),
          secret: obj({ secretName: 'string', defaultMode: 'int' }),
          emptyDir: obj({ medium: 'string', sizeLimit: 'quantity' }),
          persistentVolumeClaim: obj({ claimName: 'string', readOnly: 'bool' }, ['claimName']),
        },
        ['name'],
      ),
    ),
  },
  ['containers'],
);
const template = obj({ metadata: obj({ labels: stringMap, annotations: stringMap }), spec: podSpec }, ['spec']);
const peer = obj({ podSelector: labelSelector, namespaceSelector: labelSelector, ipBlock: obj({ cidr: 'string', except: list('string') }, ['cidr']) });
const policyPort = obj({ protocol: 'string', port: 'int-or-string', endPort: 'int' });

const KINDS: Readonly<Record<string, { apiVersion: string; shape: ObjectShape }>> = {
  Namespace: { apiVersion: 'v1', shape: obj({ metadata }) },
  Secret: { apiVersion: 'v1', shape: obj({ metadata, type: 'string', data: stringMap, stringData: stringMap }) },
  ConfigMap: { apiVersion: 'v1', shape: obj({ metadata, data: stringMap }) },
  Service: {
    apiVersion: 'v1',
    shape: obj({
      metadata,
      spec: obj(
        {
          type: 'string',
          clusterIP: 'string',
          publishNotReadyAddresses: 'bool',
          selector: stringMap,
          ports: list(obj({ name: 'string', port: 'int', targetPort: 'int-or-string', protocol: 'string' }, ['port'])),
        },
        ['ports'],
      ),
    }),
  },
  Deployment: { apiVersion: 'apps/v1', shape: obj({ metadata, spec: obj({ replicas: 'int', selector: labelSelector, template }, ['selector', 'template']) }) },
  StatefulSet: {
    apiVersion: 'apps/v1',
    shape: obj({ metadata, spec: obj({ serviceName: 'string', podManagementPolicy: 'string', replicas: 'int', selector: labelSelector, template }, ['selector', 'template']) }),
  },
  Job: { apiVersion: 'batch/v1', shape: obj({ metadata, spec: obj({ backoffLimit: 'int', activeDeadlineSeconds: 'int', ttlSecondsAfterFinished: 'int', completionMode: 'string', completions: 'int', parallelism: 'int', template }, ['template']) }) },
  NetworkPolicy: {
    apiVersion: 'networking.k8s.io/v1',
    shape: obj({
      metadata,
      spec: obj(
        { podSelector: labelSelector, policyTypes: list('string'), ingress: list(obj({ from: list(peer), ports: list(policyPort) })), egress: list(obj({ to: list(peer), ports: list(policyPort) })) },
        ['podSelector'],
      ),
    }),
  },
};

const QUANTITY = /^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Problems of one object, each with its field path; empty when it validates. */
export function validateObject(o: Record<string, unknown>): string[] {
  const kind = String(o['kind']);
  const known = KINDS[kind];
  if (!known) return [`${kind}: kind not known to this validator`];
  const problems: string[] = [];
  if (o['apiVersion'] !== known.apiVersion) problems.push(`${kind}.apiVersion: expected ${known.apiVersion}, got ${String(o['apiVersion'])}`);
  const { apiVersion: _a, kind: _k, ...rest } = o;
  check(rest, known.shape, kind, problems);
  const name = (o['metadata'] as { name?: unknown } | undefined)?.name;
  if (typeof name === 'string' && (!DNS_LABEL.test(name) || name.length > 63)) problems.push(`${kind}.metadata.name: '${name}' is not a DNS label`);
  return problems;
}

function check(value: unknown, shape: Shape, path: string, problems: string[]): void {
  const fail = (expected: string): void => void problems.push(`${path}: expected ${expected}, got ${JSON.stringify(value)}`);
  if (shape === 'string') return void (typeof value !== 'string' && fail('a string'));
  if (shape === 'bool') return void (typeof value !== 'boolean' && fail('a boolean'));
  if (shape === 'int') return void (!Number.isInteger(value) && fail('an integer'));
  if (shape === 'int-or-string') return void (!(Number.isInteger(value) || typeof value === 'string') && fail('an integer or a string'));
  if (shape === 'quantity') return void (!(typeof value === 'string' ? QUANTITY.test(value) : typeof value === 'number' && value >= 0) && fail('a quantity'));
  if (shape === 'any-map') return void ((typeof value !== 'object' || value === null) && fail('an object'));
  if ('list' in shape) {
    if (!Array.isArray(value)) return fail('a list');
    value.forEach((item, i) => check(item, shape.list, `${path}[${i}]`, problems));
    return;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('an object');
  const record = value as Record<string, unknown>;
  if ('map' in shape) {
    for (const [key, item] of Object.entries(record)) check(item, shape.map, `${path}.${key}`, problems);
    return;
  }
  for (const required of shape.required ?? []) if (!(required in record)) problems.push(`${path}.${required}: required`);
  for (const [key, item] of Object.entries(record)) {
    const child = shape.fields[key];
    if (child === undefined) problems.push(`${path}.${key}: unknown field`);
    else check(item, child, `${path}.${key}`, problems);
  }
}
