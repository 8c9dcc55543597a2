// Stable machine ids on Kubernetes: a StatefulSet pod is named `<set>-<ordinal>`, and each set
// owns a contiguous id range starting at LF_NODE_ID_BASE, so node.id = base + ordinal survives
// rescheduling and never collides across sets. (LF_ rather than LOCKFABRIC_: the config loader
// rejects LOCKFABRIC_ variables that name no config key.)

/**
 * The node id for this process, or undefined when the environment does not ask for one.
 * An explicit LOCKFABRIC_NODE_ID always wins.
 * @param {Readonly<Record<string, string | undefined>>} env
 * @param {string} hostname
 * @returns {number | undefined}
 */
export function machineId(env, hostname) {
  if (env.LOCKFABRIC_NODE_ID !== undefined && env.LOCKFABRIC_NODE_ID.trim() !== '') return undefined;
  const base = env.LF_NODE_ID_BASE;
  if (base === undefined || base.trim() === '') return undefined;
  if (!/^\d+$/.test(base.trim())) throw new Error(`LF_NODE_ID_BASE: expected a non-negative integer, got '${base}'`);
  const podName = env.LF_POD_NAME && env.LF_POD_NAME.trim() !== '' ? env.LF_POD_NAME.trim() : hostname;
  const match = /-(\d+)$/.exec(podName);
  if (!match) throw new Error(`LF_NODE_ID_BASE is set but pod name '${podName}' has no StatefulSet ordinal (-N suffix)`);
  return Number(base.trim()) + Number(match[1]);
}

/**
 * The rack of this pod in a multi-rack cluster (FissLock §5.4), or undefined without LF_RACKS > 1:
 * StatefulSet ordinal mod LF_RACKS, so switch-dataplane-r serves rack r and compute-node-i sits in
 * rack i mod R, as `lockfabric cluster up --racks R` places them. An explicit LOCKFABRIC_NODE_RACK
 * or LOCKFABRIC_SWITCH_RACK wins.
 * @param {Readonly<Record<string, string | undefined>>} env
 * @param {string} hostname
 * @returns {number | undefined}
 */
export function machineRack(env, hostname) {
  const racks = env.LF_RACKS;
  if (racks === undefined || racks.trim() === '') return undefined;
  if (!/^[1-9]\d*$/.test(racks.trim())) throw new Error(`LF_RACKS: expected an integer ≥ 1, got '${racks}'`);
  if (Number(racks) === 1) return undefined;
  const podName = env.LF_POD_NAME && env.LF_POD_NAME.trim() !== '' ? env.LF_POD_NAME.trim() : hostname;
  const match = /-(\d+)$/.exec(podName);
  if (!match) throw new Error(`LF_RACKS is set but pod name '${podName}' has no StatefulSet ordinal (-N suffix)`);
  return Number(match[1]) % Number(racks);
}

/** Sets the rack keys the apps read (node.rack for compute nodes, switch.rack for a switch) unless given. */
export function applyMachineRack(env, rack) {
  if (rack === undefined) return;
  for (const key of ['LOCKFABRIC_NODE_RACK', 'LOCKFABRIC_SWITCH_RACK']) if (env[key] === undefined || env[key].trim() === '') env[key] = String(rack);
}

/** Apps of the image, by the name given as the container's first argument. */
export const APP_ENTRIES = {
  'memory-node': 'apps/memory-node/dist/main.js',
  'compute-node': 'apps/compute-node/dist/main.js',
  'switch-dataplane': 'apps/switch-dataplane/dist/main.js',
  coordinator: 'apps/coordinator/dist/main.js',
  lockfabric: 'apps/workload-driver/bin/lockfabric.js',
};
