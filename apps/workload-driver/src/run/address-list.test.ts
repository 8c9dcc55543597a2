import { describe, expect, it } from 'vitest';
import { ConfigError } from '@lockfabric/ports';
import { addressListProblems, parseAddressList } from './remote-cluster.js';

describe('address-list flags', () => {
  it('lists every bad address of a flag, for the command to report with its other problems', () => {
    expect(addressListProblems('compute-nodes-at', 'nohost,10.0.0.1:0,10.0.0.2:50051')).toEqual([
      "--compute-nodes-at: expected host:port with a port 1-65535, got 'nohost'",
      "--compute-nodes-at: expected host:port with a port 1-65535, got '10.0.0.1:0'",
    ]);
    expect(addressListProblems('memory-nodes-at', ' , ')).toEqual(['--memory-nodes-at: expected at least one host:port']);
    expect(addressListProblems('memory-nodes-at', undefined)).toEqual([]);
    expect(addressListProblems('memory-nodes-at', '127.0.0.1:50052')).toEqual([]);
  });

  it('parses a good list and throws one ConfigError with every problem for a bad one', () => {
    expect(parseAddressList('compute-nodes-at', 'a:1, b:2')).toEqual([{ host: 'a', port: 1 }, { host: 'b', port: 2 }]);
    expect(() => parseAddressList('compute-nodes-at', 'x,y')).toThrow(ConfigError);
  });
});
