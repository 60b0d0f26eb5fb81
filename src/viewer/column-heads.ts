import { type Child, element } from "./element.js";

/**
 * A table's `<thead>`: one row of column headings, each `scope="col"` so that a screen reader names a cell's column
 * as it reads the cell. Every table of the viewer starts with it.
 */
export function columnHeads(headings: readonly Child[]): HTMLTableSectionElement {
  return element(
    "thead",
    {},
    element(
      "tr",
      {},
      headings.map((heading) => element("th", { scope: "col" }, heading)),
    ),
  );
}
