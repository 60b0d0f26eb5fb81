import type { ExecutionContract } from "../contract/execution-contract.js";
import { accountingTotals } from "../session/accounting-totals.js";
import type { SessionState } from "../session/session-state.js";
import type { TransitionOutput } from "../session/transition-output.js";

/**
 * Live progress on stderr (turn n of max, tool calls, tokens), derived from state transitions. Quiet when
 * stderr is not a terminal, so that scripts and CI logs get only the report.
 */
export function createProgressReporter(
  stream: NodeJS.WriteStream,
): ((state: SessionState, output: TransitionOutput, contract: ExecutionContract) => void) | undefined {
  if (!stream.isTTY) return undefined;
  return (state, output, contract) => {
    const effect = output.effect;
    if (effect.type === "infer") {
      const attempt = effect.attempt > 1 ? ` (attempt ${effect.attempt})` : "";
      stream.write(
        `charter: turn ${effect.turn} of ${contract.max_inferences}${attempt}, ${state.tokensConsumed} tokens so far${costText(state)}\n`,
      );
    } else if (effect.type === "execute_tools") {
      stream.write(`charter:   tools: ${effect.calls.map((call) => call.name).join(", ")}\n`);
    } else if (effect.type === "terminate") {
      stream.write(
        `charter: ${state.outcome} after ${state.turn} turn(s), ${state.tokensConsumed} tokens${costText(state)}\n`,
      );
    }
  };
}

function costText(state: SessionState): string {
  const { costUsd } = accountingTotals(state.accounting);
  return costUsd === null ? "" : `, $${costUsd.toFixed(4)}`;
}
