import { describe, expect, it } from "vitest";
import { buildExecutionContract } from "../../src/contract/contract-factory.js";
import type { ExecutionContract } from "../../src/contract/execution-contract.js";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { SecretRedactor } from "../../src/foundation/secret-redactor.js";
import { createTokenEstimator } from "../../src/model/token-estimator.js";
import { createSessionContext } from "../../src/session/create-session-context.js";
import { runSession } from "../../src/session/run-session.js";
import { startScriptedOpenAIServer } from "../../src/testing/scripted-openai-server.js";
import { createHashChainTranscript } from "../../src/transcript/hash-chain-transcript.js";
import { openAICompatibleClient, report, runScripted } from "./session-harness.js";

function contractFor(): ExecutionContract {
  return buildExecutionContract({
    agent: { id: "a", systemPrompt: "s", settings: {} },
    configurationDefaults: {},
    overrides: {},
    modelTargets: [{ provider: "p", model: "m", contextWindow: 10_000 }],
    toolManifest: [],
    parentContractHash: null,
    adapterVersion: "test",
    environment: deterministicEnvironment(),
  });
}

/**
 * Runs a session on a hand-made contract: only reachable through `runSession` itself, since every other entry
 * point builds the contract. The model is a real HTTP client whose server has no script, so any inference
 * would show up in `modelRequests`.
 */
async function runWith(contract: ExecutionContract) {
  const environment = deterministicEnvironment();
  const server = await startScriptedOpenAIServer({ script: [] });
  const reject = () => ({ ok: false as const, errors: ["unused"], code: "TOOL_INPUT_INVALID" as const });
  try {
    const { result } = await runSession(
      {
        contract,
        context: createSessionContext({
          contract,
          tokenEstimator: createTokenEstimator(),
          validateFinalReport: reject,
          validateTextAsJsonReport: reject,
        }),
        models: [openAICompatibleClient(server.baseUrl, "m", environment)],
        executeTool: async () => {
          throw new Error("no tools in this test");
        },
        transcript: createHashChainTranscript({
          runId: "run_1",
          contractHash: contract.contract_hash,
          adapterVersion: "test",
          modelProfileId: "p/m",
          redactor: new SecretRedactor(),
        }),
        environment,
        runId: "run_1",
      },
      [],
    );
    return { result, modelRequests: server.requests.length };
  } finally {
    await server.close();
  }
}

// seed 002 Invariant B, Phase 2b
describe("contract enforcement: a run executes only under a contract it can prove", () => {
  it("refuses a contract without provenance, before any inference", async () => {
    const { contract_id: _id, ...withoutId } = contractFor();
    const { result, modelRequests } = await runWith(Object.freeze(withoutId) as unknown as ExecutionContract);
    expect(result.success).toBe(false);
    expect(result.error?.code).toBe("CONTRACT_PROVENANCE_MISSING");
    expect(modelRequests).toBe(0);
  });

  it("refuses a contract whose content no longer matches its hash", async () => {
    const tampered = Object.freeze({ ...contractFor(), max_inferences: 99 });
    const { result, modelRequests } = await runWith(tampered as ExecutionContract);
    expect(result.error?.code).toBe("CONTRACT_PROVENANCE_MISSING");
    expect(modelRequests).toBe(0);
  });

  it("the contract cannot be mutated during a run", async () => {
    const run = await runScripted({ script: [{ kind: "tool_calls", calls: [report("x")] }] });
    expect(Object.isFrozen(run.contract)).toBe(true);
    expect(() => {
      (run.contract as { max_inferences: number }).max_inferences = 1000;
    }).toThrow(TypeError);
    expect(() => {
      (run.contract.context_budget as { context_window: number }).context_window = 1;
    }).toThrow(TypeError);
  });

  it("preflight: reserved tokens that do not fit the window fail with FAILED_PREFLIGHT before any inference", async () => {
    const run = await runScripted({
      contextWindow: 4000,
      settings: { reservedSynthesisTokens: 3000, maxOutputTokens: 2000 },
      script: [],
    });
    expect(run.result.outcome).toBe("FAILED_PREFLIGHT");
    expect(run.result.error?.code).toBe("PREFLIGHT_FAILED");
    expect(run.requests).toHaveLength(0);
    expect(run.writer.entries.map((entry) => entry.state)).toEqual(["PRECHECK", "TERMINATE"]);
    expect(run.verification.ok).toBe(true);
  });

  it("preflight: an allowed tool that does not exist fails the run before any inference", async () => {
    const run = await runScripted({ settings: { allowedTools: ["missing_tool"] }, script: [] });
    expect(run.result.outcome).toBe("FAILED_PREFLIGHT");
    expect(run.requests).toHaveLength(0);
  });

  it("preflight: an environment problem (a tool server down) is FAILED_PREFLIGHT with MCP_SERVER_FAILED", async () => {
    const run = await runScripted({
      script: [],
      preflight: async () => [{ check: "tool_servers", detail: "server 'x' is not healthy" }],
    });
    expect(run.result.outcome).toBe("FAILED_PREFLIGHT");
    expect(run.result.error?.code).toBe("MCP_SERVER_FAILED");
  });
});
