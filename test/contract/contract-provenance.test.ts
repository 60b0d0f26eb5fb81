import { describe, expect, it } from "vitest";
import { buildExecutionContract } from "../../src/contract/contract-factory.js";
import { assertContractProvenance } from "../../src/contract/contract-factory-provenance.js";
import type { ExecutionContract } from "../../src/contract/execution-contract.js";
import { CharterError } from "../../src/foundation/charter-error.js";
import { factoryInput } from "./contract-factory-fixtures.js";

function provenanceFailure(contract: unknown): CharterError {
  try {
    assertContractProvenance(contract as ExecutionContract);
  } catch (error) {
    if (CharterError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected assertContractProvenance to throw");
}

describe("assertContractProvenance", () => {
  const contract = buildExecutionContract(factoryInput());

  it("accepts a contract from the factory", () => {
    expect(() => assertContractProvenance(contract)).not.toThrow();
  });

  it.each(["contract_id", "contract_hash", "model_profile_id"])("refuses a contract without %s", (field) => {
    const { [field as keyof ExecutionContract]: _removed, ...withoutField } = contract;
    const missing = provenanceFailure(withoutField);
    expect(missing.code).toBe("CONTRACT_PROVENANCE_MISSING");
    expect(missing.details.missing).toEqual([field]);
    const empty = provenanceFailure({ ...contract, [field]: "" });
    expect(empty.details.missing).toEqual([field]);
  });

  it("refuses a contract whose content no longer matches its hash", () => {
    const tampered = { ...contract, max_inferences: contract.max_inferences + 1 };
    const error = provenanceFailure(tampered);
    expect(error.code).toBe("CONTRACT_PROVENANCE_MISSING");
    expect(error.details).toMatchObject({
      contract_id: contract.contract_id,
      expected: contract.contract_hash,
    });
    expect(error.details.actual).not.toBe(contract.contract_hash);
  });

  it("refuses a contract whose hash was replaced", () => {
    expect(provenanceFailure({ ...contract, contract_hash: "0".repeat(64) }).code).toBe(
      "CONTRACT_PROVENANCE_MISSING",
    );
  });

  it("ignores the id and creation time, which the hash leaves out", () => {
    expect(() =>
      assertContractProvenance({
        ...contract,
        contract_id: "contract_other",
        created_at: "2030-01-01T00:00:00.000Z",
      }),
    ).not.toThrow();
  });

  it("refuses a contract whose content cannot be hashed", () => {
    const error = provenanceFailure({ ...contract, max_inferences: Number.NaN });
    expect(error.code).toBe("CONTRACT_PROVENANCE_MISSING");
  });
});
