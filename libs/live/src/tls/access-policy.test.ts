import { describe, expect, it } from 'vitest';
import { ACCESS_POLICY, DESCRIPTOR_ACCESS_POLICY } from './access-policy.js';
import { decide } from './peer-guard.js';

const CONNECT = '/lockfabric.v1.MemoryService/Connect';
const memoryNode = { role: 'memory-node', node: '0' } as const;

describe('who may post verbs', () => {
  it("a memory node's clients may write compute nodes' descriptor slots, never another memory node's table", () => {
    expect(decide(CONNECT, true, memoryNode, DESCRIPTOR_ACCESS_POLICY).allowed).toBe(true);
    expect(decide(CONNECT, true, memoryNode, ACCESS_POLICY)).toMatchObject({ allowed: false, reason: 'wrong-role' });
    // the descriptor policy widens nothing else
    for (const [path, rule] of Object.entries(ACCESS_POLICY)) if (!path.startsWith('/lockfabric.v1.MemoryService/')) expect(DESCRIPTOR_ACCESS_POLICY[path]).toEqual(rule);
  });
});
