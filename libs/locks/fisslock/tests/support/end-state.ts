// The end-state check lives with the protocol (the swarm runs it after every seed); tests import it here.
export { checkEndState, NOT_CHECKED } from '../../src/checks/end-state.js';
export type { EndState, EndStateSource } from '../../src/checks/end-state.js';
