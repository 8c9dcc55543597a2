export { renderKustomization, strategicMerge, KustomizeError, INFRA_DIR } from './kustomize.js';
export { validateObject } from './k8s-schema.js';
export { admits, networkProblems } from './network-check.js';
export type { Flow } from './network-check.js';
export { hardeningProblems, loadAppConfigs, configMapProblems, machineIdProblems, portProblems, addressProblems, podsOf } from './deploy-checks.js';
export { readYamlDocs, parseYamlDocs } from './yaml-docs.js';
