import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CharterError } from "../../src/foundation/charter-error.js";
import { contentHash } from "../../src/foundation/content-hash.js";
import {
  type ChainLinkInput,
  computeChainLinkHash,
  computeGenesisHash,
  createChainLinkHasher,
} from "../../src/transcript/chain-link-hash.js";

const binding = { contractHash: "c".repeat(64), adapterVersion: "adapter-1", modelProfileId: "profile-1" };
const link: ChainLinkInput = {
  prev: "0".repeat(64),
  state: "INFER",
  action_hash: "a".repeat(64),
  result_hash: "b".repeat(64),
  model_fingerprint: "local/scripted",
  seq: 3,
  step_id: "turn-1/infer",
  turn: 1,
  timestamp: 1_767_225_600_000,
};

describe("chain link hash", () => {
  it("is contentHash of the documented preimage", () => {
    expect(computeChainLinkHash(binding, link)).toBe(
      contentHash({
        v: 1,
        prev: link.prev,
        contract_hash: binding.contractHash,
        state: link.state,
        action_hash: link.action_hash,
        result_hash: link.result_hash,
        adapter_version: binding.adapterVersion,
        model_profile_id: binding.modelProfileId,
        model_fingerprint: link.model_fingerprint,
        seq: link.seq,
        step_id: link.step_id,
        turn: link.turn,
        timestamp: link.timestamp,
      }),
    );
  });

  it("genesis is contentHash({ genesis: contract_hash, run_id })", () => {
    expect(computeGenesisHash("c".repeat(64), "run_1")).toBe(
      contentHash({ genesis: "c".repeat(64), run_id: "run_1" }),
    );
    expect(computeGenesisHash("c".repeat(64), "run_1")).not.toBe(computeGenesisHash("c".repeat(64), "run_2"));
  });

  it("the fast hasher equals the reference definition for any input", () => {
    const hex = fc.stringMatching(/^[0-9a-f]{64}$/);
    const number = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }));
    fc.assert(
      fc.property(
        fc.record({
          contractHash: hex,
          adapterVersion: fc.string({ unit: "binary" }),
          modelProfileId: fc.string({ unit: "binary" }),
        }),
        fc.record({
          prev: hex,
          state: fc.string({ unit: "binary" }),
          action_hash: hex,
          result_hash: hex,
          model_fingerprint: fc.option(fc.string({ unit: "binary" }), { nil: null }),
          seq: fc.nat(),
          step_id: fc.string({ unit: "binary" }),
          turn: number,
          timestamp: number,
        }),
        (anyBinding, anyLink) => {
          expect(createChainLinkHasher(anyBinding)(anyLink)).toBe(computeChainLinkHash(anyBinding, anyLink));
        },
      ),
    );
  });

  it("changes when any one field changes", () => {
    const hasher = createChainLinkHasher(binding);
    const base = hasher(link);
    const changed: ChainLinkInput[] = [
      { ...link, prev: "1".repeat(64) },
      { ...link, state: "EXECUTE" },
      { ...link, action_hash: "d".repeat(64) },
      { ...link, result_hash: "e".repeat(64) },
      { ...link, model_fingerprint: null },
      { ...link, model_fingerprint: "local/other" },
      { ...link, seq: 4 },
      { ...link, step_id: "turn-1/validate" },
      { ...link, turn: 2 },
      { ...link, timestamp: link.timestamp + 1 },
    ];
    const hashes = new Set(changed.map((variant) => hasher(variant)));
    expect(hashes.size).toBe(changed.length);
    expect(hashes.has(base)).toBe(false);
    for (const other of [
      { ...binding, contractHash: "f".repeat(64) },
      { ...binding, adapterVersion: "adapter-2" },
      { ...binding, modelProfileId: "profile-2" },
    ]) {
      expect(createChainLinkHasher(other)(link)).not.toBe(base);
    }
  });

  it("refuses a number that JSON cannot hold", () => {
    const hasher = createChainLinkHasher(binding);
    for (const bad of [
      { ...link, turn: Number.NaN },
      { ...link, timestamp: Number.POSITIVE_INFINITY },
    ]) {
      let caught: unknown;
      try {
        hasher(bad);
      } catch (error) {
        caught = error;
      }
      expect(CharterError.isInstance(caught) && caught.code).toBe("TRANSCRIPT_INVALID");
    }
  });
});
