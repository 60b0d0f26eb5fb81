import type { AccountingEntry } from "./accounting-entry.js";

/** Token and cost totals over a run's model calls; `costUsd` is null when no call had a price. */
export function accountingTotals(accounting: readonly AccountingEntry[]): {
  readonly input: number;
  readonly output: number;
  readonly costUsd: number | null;
} {
  let input = 0;
  let output = 0;
  let costUsd: number | null = null;
  for (const entry of accounting) {
    if (entry.type !== "llm") continue;
    input += entry.tokens.input;
    output += entry.tokens.output;
    if (entry.costUsd !== undefined) costUsd = (costUsd ?? 0) + entry.costUsd;
  }
  return { input, output, costUsd };
}
