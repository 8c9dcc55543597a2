import { parse, View } from 'vega';
import { compile } from 'vega-lite';
import type { TopLevelSpec } from 'vega-lite';

/** Compiles a Vega-Lite spec and renders it to an SVG string, headless (no DOM, no canvas). */
export async function renderSpecToSvg(spec: TopLevelSpec): Promise<string> {
  const view = new View(parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/**
 * Vega numbers clip paths from a process-wide counter (`clip33`). Renaming them per chart in order
 * of appearance makes the output depend on the report alone, and keeps the ids unique when several
 * charts share one HTML page.
 */
export function renameClipIds(svg: string, prefix: string): string {
  const ids = new Map<string, string>();
  return svg.replace(/\bclip\d+\b/g, (id) => {
    let renamed = ids.get(id);
    if (renamed === undefined) ids.set(id, (renamed = `${prefix}-clip${ids.size}`));
    return renamed;
  });
}

/** Renders named specs in order, each with its own clip-path ids. */
export async function renderNamedSpecs(specs: readonly (readonly [string, TopLevelSpec])[]): Promise<{ name: string; svg: string }[]> {
  const out: { name: string; svg: string }[] = [];
  for (const [name, spec] of specs) out.push({ name, svg: renameClipIds(await renderSpecToSvg(spec), name) });
  return out;
}
