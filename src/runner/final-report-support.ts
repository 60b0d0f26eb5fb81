import type { OutputFormat, ToolManifestEntry } from "../contract/execution-contract.js";
import type { FinalReportValidation } from "../session/session-context.js";
import { createFinalReportTool } from "../tools/builtin/final-report-tool.js";

/**
 * The `final_report` tool's manifest entry and its two validations: of the tool's arguments, and of a text
 * answer used as the report (seed 000 §6 text fallback) when the agent expects JSON.
 */
export function createFinalReportSupport(
  format: OutputFormat,
  schema: Readonly<Record<string, unknown>> | null,
): {
  manifest: ToolManifestEntry;
  validateArguments: (args: Readonly<Record<string, unknown>>) => FinalReportValidation;
  validateText: (text: string) => FinalReportValidation;
} {
  const tool = createFinalReportTool({ format, schema });
  const validateArguments = (args: Readonly<Record<string, unknown>>) =>
    tool.validateFinalReportArguments(args);
  return {
    manifest: tool.manifest,
    validateArguments,
    validateText(text) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return { ok: false, errors: ["the answer is not valid JSON"], code: "OUTPUT_SCHEMA_INVALID" };
      }
      return validateArguments({ format: "json", content_json: parsed });
    },
  };
}
