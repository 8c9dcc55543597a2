// The product generator lives in @lockfabric/random (one module for every seeded sequence);
// `sim` keeps exporting it under its old name so importers are unchanged.
export { SeededRandom } from '@lockfabric/random';
