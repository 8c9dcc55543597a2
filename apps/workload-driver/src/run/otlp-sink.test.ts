import { describe, expect, it } from 'vitest';
import { parseTraceSetting, startOtlpSink, traceEnvironment } from './otlp-sink.js';
import { readTraceSettings } from './traced-cluster.js';

describe('--trace-ratio', () => {
  it('reads off, ratios and percentages, and names what it cannot read', () => {
    expect(parseTraceSetting('off')).toStrictEqual({ off: true });
    expect(parseTraceSetting('0.01')).toStrictEqual({ off: false, ratio: 0.01 });
    expect(parseTraceSetting('1%')).toStrictEqual({ off: false, ratio: 0.01 });
    expect(parseTraceSetting('1')).toStrictEqual({ off: false, ratio: 1 });
    for (const bad of ['1.5', '-0.1', 'half', '200%']) expect(parseTraceSetting(bad)).toMatch(/--trace-ratio: expected off, a ratio/);
  });

  it('is a live flag: every problem with it is listed', () => {
    const problems: string[] = [];
    readTraceSettings({ 'trace-ratio': '1%', 'compute-nodes-at': 'h:1', 'cluster-dir': '/nonexistent' }, 'sim', problems);
    expect(problems).toStrictEqual([expect.stringMatching(/a live figure/), expect.stringMatching(/--compute-nodes-at has its tracing set/)]);
  });

  it('takes a list of settings, one temporary cluster each; a bad or repeated one is a listed problem', () => {
    const live = (raw: string) => {
      const problems: string[] = [];
      return { settings: readTraceSettings({ 'trace-ratio': raw, 'cluster-dir': '/nonexistent' }, 'live', problems), problems };
    };
    expect(live('off,1%')).toStrictEqual({ settings: [{ off: true }, { off: false, ratio: 0.01 }], problems: [] });
    expect(live('1%')).toStrictEqual({ settings: [{ off: false, ratio: 0.01 }], problems: [] });
    const bad = live('off, 0.01,1%,half');
    expect(bad.settings).toStrictEqual([{ off: true }, { off: false, ratio: 0.01 }]);
    expect(bad.problems).toStrictEqual([expect.stringMatching(/"1%" is given twice/), expect.stringMatching(/expected off, a ratio .* got "half"/)]);
    expect(readTraceSettings({}, 'live', [])).toBeUndefined();
  });

  it('gives the services a traces endpoint and ratio, or no exporter when off', () => {
    expect(traceEnvironment({ off: true }, 'http://x/v1/traces')).toStrictEqual({ OTEL_TRACES_EXPORTER: 'none' });
    expect(traceEnvironment({ off: false, ratio: 0.01 }, 'http://x/v1/traces')).toMatchObject({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://x/v1/traces', LOCKFABRIC_TRACE_RATIO: '0.01' });
  });

  it('the sink counts the exports it answered', async () => {
    const sink = await startOtlpSink();
    try {
      const response = await fetch(sink.endpoint, { method: 'POST', body: new Uint8Array(10) });
      expect(response.status).toBe(200);
      expect(sink.counts()).toStrictEqual({ requests: 1, bytes: 10 });
    } finally {
      await sink.close();
    }
  });
});
