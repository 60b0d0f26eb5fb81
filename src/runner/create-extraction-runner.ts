import type { ContractModelTargetInput } from "../contract/contract-factory-input.js";
import type { RuntimeEnvironment } from "../foundation/environment.js";
import type { SecretRedactor } from "../foundation/secret-redactor.js";
import type { ModelClient } from "../model/model-client.js";
import { finalReportText } from "../session/final-report.js";
import type { ToolOutputExtractor } from "../tools/builtin/tool-output-extraction.js";
import { type PreparedAgent, prepareAgent } from "./prepare-agent.js";

const extractionSystemPrompt = [
  "You extract information from a tool output for another agent.",
  "Answer the question using only the text you are given. Quote exact values. If the text does not contain the",
  "answer, say so in one sentence. Reply with the answer only.",
].join(" ");

/**
 * `tool_output` extraction (issue: "a bounded child run over chunks of the stored output, map then reduce"):
 * each step is a one-turn child session under its own contract, on the parent's model targets, with tools
 * forbidden. Its accounting entries go back to the parent run (their call path ends in `/extract`).
 */
export function createExtractionRunner(options: {
  readonly targets: readonly ContractModelTargetInput[];
  readonly models: readonly ModelClient[];
  readonly environment: RuntimeEnvironment;
  readonly redactor: SecretRedactor;
  readonly callPath: string;
}): ToolOutputExtractor {
  let agent: PreparedAgent | null = null;
  return async (request) => {
    agent ??= prepareAgent({
      agent: {
        id: "tool-output-extractor",
        systemPrompt: extractionSystemPrompt,
        settings: { toolPolicy: "forbidden", maxTurns: 1, maxRetries: 2, output: { format: "text" } },
      },
      targets: options.targets,
      models: options.models,
      environment: options.environment,
      redactor: options.redactor,
      trace: { callPath: `${options.callPath}/extract`, parentTxnId: null, originTxnId: null },
    });
    const prompt =
      request.phase === "map"
        ? `Question: ${request.question}\n\nText (part ${request.chunk?.index} of ${request.chunk?.count}, lines ${request.chunk?.firstLine}-${request.chunk?.lastLine}):\n${request.chunks[0] ?? ""}`
        : `Question: ${request.question}\n\nCombine these partial answers into one answer:\n${request.chunks.map((chunk, index) => `${index + 1}. ${chunk}`).join("\n")}`;
    const { result } = await agent.run({ prompt, signal: request.signal });
    return {
      answer: result.finalReport === null ? "" : finalReportText(result.finalReport),
      accounting: result.accounting,
    };
  };
}
