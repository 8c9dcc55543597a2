/** A rendered report: the self-contained page and each plot as a named SVG (written as `<name>.svg`). */
export interface RenderedReport {
  readonly html: string;
  readonly svgs: readonly { readonly name: string; readonly svg: string }[];
}
