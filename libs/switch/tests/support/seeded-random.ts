/** The tests' small deterministic generator: mulberry32 of the one generator module. */
export { Mulberry32 as TestRandom } from '@lockfabric/random';
