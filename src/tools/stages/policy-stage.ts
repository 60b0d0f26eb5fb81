import { failedToolResult } from "../failed-tool-result.js";
import { requireLookedUpTool } from "../require-looked-up-tool.js";
import type { ToolStage } from "../tool-pipeline.js";

// The contract is frozen for the whole run, so its lists are turned into sets once, keyed by the list itself.
const allowedSets = new WeakMap<readonly string[], ReadonlySet<string>>();
const forbiddenPairSets = new WeakMap<readonly (readonly [string, string])[], ReadonlySet<string>>();

const pairKey = (from: string, to: string) => `${from}\u0000${to}`;

function allowedSetOf(allowed: readonly string[]): ReadonlySet<string> {
  let set = allowedSets.get(allowed);
  if (set === undefined) {
    set = new Set(allowed);
    allowedSets.set(allowed, set);
  }
  return set;
}

function forbiddenPairsOf(pairs: readonly (readonly [string, string])[]): ReadonlySet<string> {
  let set = forbiddenPairSets.get(pairs);
  if (set === undefined) {
    set = new Set(pairs.map(([from, to]) => pairKey(from, to)));
    forbiddenPairSets.set(pairs, set);
  }
  return set;
}

/**
 * Enforces the contract's tool policy (seed 002 §4.1), in this order: `tool_policy=forbidden` refuses every
 * call (CONTRACT_VIOLATION); a tool outside `allowed_tools` is refused (TOOL_NOT_ALLOWED; the runtime's
 * built-in tools are always allowed); a `[previous, this]` pair listed in `cycle_forbid` is refused
 * (CONTRACT_VIOLATION). A refused tool does not run.
 */
export const policyStage: ToolStage = (call, next) => {
  const tool = requireLookedUpTool(call, "policyStage");
  const { policy, invocation, previousToolName } = call;
  const name = invocation.name;
  if (policy.tool_policy === "forbidden") {
    return Promise.resolve(
      failedToolResult(
        call,
        "CONTRACT_VIOLATION",
        `tool calls are forbidden by the contract (tool_policy=forbidden)`,
      ),
    );
  }
  if (
    policy.allowed_tools !== null &&
    tool.manifest.source.kind !== "builtin" &&
    !allowedSetOf(policy.allowed_tools).has(name)
  ) {
    return Promise.resolve(
      failedToolResult(call, "TOOL_NOT_ALLOWED", `tool '${name}' is not in the contract's allowed_tools`),
    );
  }
  if (
    previousToolName !== null &&
    policy.cycle_forbid.length > 0 &&
    forbiddenPairsOf(policy.cycle_forbid).has(pairKey(previousToolName, name))
  ) {
    return Promise.resolve(
      failedToolResult(
        call,
        "CONTRACT_VIOLATION",
        `calling '${name}' right after '${previousToolName}' is forbidden by the contract (cycle_forbid)`,
      ),
    );
  }
  return next();
};
