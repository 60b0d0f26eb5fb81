import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { mcpCallResultProblem } from "./mcp-call-result-problem.js";

const envelopeProblem = Symbol("envelopeProblem");

/**
 * How the MCP source has the SDK client parse a `tools/call` result. The SDK's own parse (`CallToolResultSchema`)
 * rejects a malformed result with a parse error, which reaches Charter as one more failed request, that is, an
 * ordinary tool failure; a malformed envelope must instead fail the run (FAILED_VALIDATION). This schema lets every
 * result through: a well-formed one exactly as the SDK parses it, a malformed one as a failed result (`isError`, so
 * that the SDK's check of the tool's output schema passes it by) carrying what is wrong, which `problemOf` reads back.
 */
export const lenientCallToolResult = {
  // Typed as the SDK's schema: `Client.callTool` accepts no other, and what it returns is that shape either way.
  schema: z.unknown().transform((value) => {
    const problem = mcpCallResultProblem(value);
    if (problem === null) return CallToolResultSchema.parse(value);
    return { content: [], isError: true, [envelopeProblem]: problem };
  }) as unknown as typeof CallToolResultSchema,

  /** What was wrong with the result's envelope, or null when it was well formed. */
  problemOf(result: unknown): string | null {
    const problem = (result as { [envelopeProblem]?: unknown } | null)?.[envelopeProblem];
    return typeof problem === "string" ? problem : null;
  },
};
