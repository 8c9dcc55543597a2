/** Counts the `<path>` marks Vega drew in groups of one mark class (e.g. `mark-line`) of an SVG string. */
export function countMarks(svg: string, markClass: string): number {
  let total = 0;
  for (const m of svg.matchAll(new RegExp(`<g class="${markClass} role-mark[^"]*"[^>]*?(?:/>|>(.*?)</g>)`, 'gs'))) total += (m[1] ?? '').match(/<path\b/g)?.length ?? 0;
  return total;
}

/** The `<path>` elements Vega drew in groups of one mark class. */
export function markPaths(svg: string, markClass: string): string[] {
  const out: string[] = [];
  for (const m of svg.matchAll(new RegExp(`<g class="${markClass} role-mark[^"]*"[^>]*?(?:/>|>(.*?)</g>)`, 'gs'))) out.push(...((m[1] ?? '').match(/<path\b[^>]*>/g) ?? []));
  return out;
}
