import { describe, expect, it } from "vitest";
import { buildExecutionContract } from "../../src/contract/contract-factory.js";
import type { ContractAbilityInjection } from "../../src/contract/contract-factory-input.js";
import { computeContractHash } from "../../src/contract/contract-hash.js";
import { executionContractSchema } from "../../src/contract/execution-contract.js";
import { blake3Hex } from "../../src/foundation/content-hash.js";
import { factoryInput } from "./contract-factory-fixtures.js";

const injection: ContractAbilityInjection = {
  text: '<ability id="house">\nBe brief.\n</ability>',
  tokens: 12,
  tokenBudget: 40,
  tokenBudgetSource: "agent",
  injected: [
    {
      id: "house",
      kind: "core",
      contentHash: blake3Hex("Be brief."),
      relevance: null,
      tokens: 12,
      truncated: false,
    },
  ],
  leftOut: [{ id: "joins", kind: "matched", contentHash: blake3Hex("Explicit joins."), relevance: 1 }],
  cut: "token budget 40: joins left out",
};

describe("a contract with abilities", () => {
  it("prepends their text to the system prompt and records each one's id and content hash (schema version 4)", () => {
    const contract = buildExecutionContract({ ...factoryInput(), abilities: injection });
    expect(executionContractSchema.safeParse(contract).success).toBe(true);
    expect(contract.schema_version).toBe(4);
    expect(contract.system_prompt).toBe('<ability id="house">\nBe brief.\n</ability>\n\nYou review code.');
    expect(contract.abilities).toEqual({
      token_budget: 40,
      tokens: 12,
      injected: [
        {
          id: "house",
          kind: "core",
          content_hash: blake3Hex("Be brief."),
          relevance: null,
          tokens: 12,
          truncated: false,
        },
      ],
      left_out: [{ id: "joins", kind: "matched", content_hash: blake3Hex("Explicit joins."), relevance: 1 }],
    });
    expect(contract.decisions).toMatchObject({
      ability_token_budget: "agent",
      abilities_cut: "token budget 40: joins left out",
    });
    expect(contract.contract_hash).toBe(computeContractHash(contract));
  });

  it("hashes what was injected: other knowledge, another hash", () => {
    const one = buildExecutionContract({ ...factoryInput(), abilities: injection });
    const other = buildExecutionContract({
      ...factoryInput(),
      abilities: {
        ...injection,
        injected: [{ ...injection.injected[0]!, contentHash: blake3Hex("Be verbose.") }],
      },
    });
    expect(other.contract_hash).not.toBe(one.contract_hash);
  });

  it("is not what an agent without abilities gets: version 3, no abilities key, the hash it always had", () => {
    const contract = buildExecutionContract(factoryInput());
    expect(contract.schema_version).toBe(3);
    expect(Object.hasOwn(contract, "abilities")).toBe(false);
    expect(Object.keys(contract.decisions).filter((key) => key.startsWith("abilit"))).toEqual([]);
    // The hash this input gave before abilities existed: a run recorded then rebuilds to it, so it still resumes.
    expect(contract.contract_hash).toBe("d2846ea24ab0d8a345afb0c886f068e2c396220a9b695e4b56a1cbac624a7878");
  });

  it("carries abilities exactly in schema version 4", () => {
    const withAbilities = buildExecutionContract({ ...factoryInput(), abilities: injection });
    const without = buildExecutionContract(factoryInput());
    expect(executionContractSchema.safeParse({ ...withAbilities, schema_version: 3 }).success).toBe(false);
    expect(executionContractSchema.safeParse({ ...without, schema_version: 4 }).success).toBe(false);
    expect(
      executionContractSchema.safeParse({
        ...without,
        abilities: { token_budget: 1, tokens: 0, injected: [], left_out: [] },
      }).success,
    ).toBe(false);
  });
});
