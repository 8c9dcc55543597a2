import { describe, expect, it } from 'vitest';
import { FREE, caslockWordAfterDeath, holderTag, writerWord } from '../src/index.js';

describe('caslockWordAfterDeath', () => {
  it('frees an exclusive word held by a client of the dead node and leaves other holders alone', () => {
    expect(caslockWordAfterDeath(holderTag({ node: 2, client: 5 }), 2)).toBe(FREE);
    expect(caslockWordAfterDeath(holderTag({ node: 1, client: 5 }), 2)).toBeUndefined();
    expect(caslockWordAfterDeath(FREE, 2)).toBeUndefined();
  });

  it('rw: clears a dead writer field but keeps the (anonymous) reader count', () => {
    const word = writerWord(holderTag({ node: 3, client: 0 })) | 2n;
    expect(caslockWordAfterDeath(word, 3)).toBe(2n);
    expect(caslockWordAfterDeath(word, 1)).toBeUndefined();
  });
});
