import { describe, expect, it } from "vitest";
import { buildExecutionContract } from "../../src/contract/contract-factory.js";
import type { ContractAbilityInjection } from "../../src/contract/contract-factory-input.js";
import { computeContractHash } from "../../src/contract/contract-hash.js";
import { executionContractSchema } from "../../src/contract/execution-contract.js";
import { CharterError } from "../../src/foundation/charter-error.js";
import { factoryInput } from "./contract-factory-fixtures.js";

/** A contract rebuilt under the schema version a recorded run's contract has (a resume), as that version built it. */
describe("a contract built as an earlier schema version", () => {
  it("version 2 has no attempt bounds and records no decision for them; everything else is as today", () => {
    const input = factoryInput({
      agent: { id: "a", systemPrompt: "Go.", settings: { modelTimeout: 20_000 } },
    });
    const today = buildExecutionContract(input);
    const recorded = buildExecutionContract({ ...input, schemaVersion: 2 });
    expect(executionContractSchema.safeParse(recorded).success).toBe(true);
    expect(recorded.schema_version).toBe(2);
    expect(recorded.model_targets[0]).not.toHaveProperty("model_timeout_ms");
    expect(recorded.model_targets[0]).not.toHaveProperty("max_response_bytes");
    expect(recorded.decisions).not.toHaveProperty("model_timeout_ms");
    expect(recorded.decisions).not.toHaveProperty("max_response_bytes");
    expect(today.model_targets[0]).toMatchObject({ model_timeout_ms: 20_000 });
    // Only those differ: the rest of the content is the same decision for decision.
    const { model_timeout_ms: _timeout, max_response_bytes: _bytes, ...decisions } = today.decisions;
    expect(recorded.decisions).toEqual(decisions);
    expect(recorded.system_prompt).toBe(today.system_prompt);
    expect(recorded.contract_hash).toBe(computeContractHash(recorded));
    expect(recorded.contract_hash).not.toBe(today.contract_hash);
    // Deterministic, as every version: the same inputs give the same hash.
    expect(buildExecutionContract({ ...input, schemaVersion: 2 }).contract_hash).toBe(recorded.contract_hash);
    // Asking for today's version is building today's contract.
    expect(buildExecutionContract({ ...input, schemaVersion: 3 }).contract_hash).toBe(today.contract_hash);
  });

  it("refuses a version that contradicts the abilities the agent injects (CONTRACT_INVALID)", () => {
    const injection: ContractAbilityInjection = {
      text: "Be brief.",
      tokens: 3,
      tokenBudget: 40,
      tokenBudgetSource: "agent",
      injected: [],
      leftOut: [],
      cut: null,
    };
    const refusal = (build: () => unknown) => {
      try {
        build();
      } catch (error) {
        if (CharterError.isInstance(error)) return error;
        throw error;
      }
      throw new Error("expected the build to be refused");
    };
    for (const [schemaVersion, abilities] of [
      [2, injection],
      [3, injection],
      [4, undefined],
    ] as const) {
      const error = refusal(() =>
        buildExecutionContract({
          ...factoryInput(),
          schemaVersion,
          ...(abilities === undefined ? {} : { abilities }),
        }),
      );
      expect(error.code).toBe("CONTRACT_INVALID");
      expect(JSON.stringify(error.details)).toContain("schema_version");
    }
  });
});
