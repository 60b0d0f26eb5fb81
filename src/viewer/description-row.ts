import { type Child, element } from "./element.js";

/**
 * One term and its description in a `<dl>` (a run's summary, a receipt, a contract's limits): the pair every
 * summary list of the viewer is made of, so each one reads as a list of `descriptionRow(name, value)`.
 */
export function descriptionRow(term: string, description: Child): HTMLElement[] {
  return [element("dt", {}, term), element("dd", {}, description)];
}
