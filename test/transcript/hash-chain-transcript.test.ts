import { describe, expect, it } from "vitest";
import { CharterError } from "../../src/foundation/charter-error.js";
import { contentHash } from "../../src/foundation/content-hash.js";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { SecretRedactor } from "../../src/foundation/secret-redactor.js";
import type { TranscriptEntryInput } from "../../src/session/transcript-sink.js";
import { computeGenesisHash } from "../../src/transcript/chain-link-hash.js";
import { createHashChainTranscript } from "../../src/transcript/hash-chain-transcript.js";
import { createInMemoryTranscriptWriter } from "../../src/transcript/in-memory-transcript-writer.js";
import { contractFixture, entryInput, startTranscript } from "./transcript-fixtures.js";

function codeOf(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return CharterError.isInstance(error) ? error.code : error;
  }
  return "no error";
}

function headAfter(inputs: readonly TranscriptEntryInput[], runId = "run_0001"): string {
  const { transcript } = startTranscript({ runId });
  for (const input of inputs) transcript.append(input);
  return transcript.headHash;
}

describe("createHashChainTranscript", () => {
  const inputs = [0, 1, 2, 3].map((index) => entryInput(index));

  it("starts at the genesis hash and counts entries", () => {
    const { transcript, contract } = startTranscript();
    expect(transcript.headHash).toBe(computeGenesisHash(contract.contract_hash, "run_0001"));
    expect(transcript.header.genesis_hash).toBe(transcript.headHash);
    expect(transcript.entryCount).toBe(0);
    transcript.append(inputs[0]!);
    expect(transcript.entryCount).toBe(1);
  });

  it("is deterministic: the same inputs give the same head", () => {
    expect(headAfter(inputs)).toBe(headAfter(inputs));
    expect(headAfter(inputs, "run_0002")).not.toBe(headAfter(inputs));
  });

  it("follows the documented formula link by link", () => {
    const contract = contractFixture();
    const { transcript } = startTranscript();
    let previous = contentHash({ genesis: contract.contract_hash, run_id: "run_0001" });
    inputs.forEach((input, seq) => {
      const head = transcript.append(input);
      const expected = contentHash({
        v: 1,
        prev: previous,
        contract_hash: contract.contract_hash,
        state: input.state,
        action_hash: contentHash(input.action),
        result_hash: contentHash(input.result),
        adapter_version: contract.adapter_version,
        model_profile_id: contract.model_profile_id,
        model_fingerprint: input.model_fingerprint,
        seq,
        step_id: input.step_id,
        turn: input.turn,
        timestamp: input.timestamp,
      });
      expect(head).toBe(expected);
      previous = head;
    });
  });

  it("changes the head when any field of any entry changes", () => {
    const base = headAfter(inputs);
    const variants: Partial<TranscriptEntryInput>[] = [
      { state: "OBSERVE" },
      { step_id: "turn-1/other" },
      { turn: 9 },
      { timestamp: 1 },
      { action: { tool: "read_file", arguments: { path: "/workspace/other.txt" } } },
      { result: { status: "failed" } },
      { model_fingerprint: null },
      { model_fingerprint: "local/other" },
    ];
    const heads = variants.map((variant) =>
      headAfter(inputs.map((input, index) => (index === 1 ? { ...input, ...variant } : input))),
    );
    expect(new Set([base, ...heads]).size).toBe(variants.length + 1);
  });

  it("binds the run's contract hash, adapter version and model profile", () => {
    const contract = contractFixture();
    const head = (options: { contractHash?: string; adapterVersion?: string; modelProfileId?: string }) => {
      const transcript = createHashChainTranscript({
        runId: "run_0001",
        contractHash: options.contractHash ?? contract.contract_hash,
        adapterVersion: options.adapterVersion ?? contract.adapter_version,
        modelProfileId: options.modelProfileId ?? contract.model_profile_id,
        redactor: new SecretRedactor(),
        environment: deterministicEnvironment(),
      });
      return transcript.append(inputs[0]!);
    };
    const base = head({});
    expect(head({ contractHash: "0".repeat(64) })).not.toBe(base);
    expect(head({ adapterVersion: "adapter-2" })).not.toBe(base);
    expect(head({ modelProfileId: "other" })).not.toBe(base);
  });

  it("redacts before hashing: hashes cover the redacted values only", () => {
    const redactor = new SecretRedactor();
    redactor.addSecret("sk-secret-0001", "API_KEY");
    const writer = createInMemoryTranscriptWriter();
    const { transcript } = startTranscript({ redactor, writer, keepEntries: true });
    const action = { headers: { authorization: "Bearer sk-secret-0001" }, note: "uses sk-secret-0001" };
    const result = { echoed: "sk-secret-0001" };
    transcript.append(entryInput(0, { action, result, step_id: "step sk-secret-0001" }));
    const [entry] = transcript.entries;
    expect(entry!.action).toEqual({
      headers: { authorization: "[REDACTED:authorization]" },
      note: "uses [REDACTED:API_KEY]",
    });
    expect(entry!.result).toEqual({ echoed: "[REDACTED:API_KEY]" });
    expect(entry!.step_id).toBe("step [REDACTED:API_KEY]");
    expect(entry!.action_hash).toBe(contentHash(entry!.action));
    expect(entry!.action_hash).not.toBe(contentHash(action));
    expect(entry!.result_hash).not.toBe(contentHash(result));
    expect(writer.entries[0]).toBe(entry);
  });

  it("keeps entries only when asked", () => {
    const plain = startTranscript().transcript;
    plain.append(inputs[0]!);
    expect(plain.entries).toEqual([]);
    const keeping = startTranscript({ keepEntries: true }).transcript;
    keeping.append(inputs[0]!);
    keeping.append(inputs[1]!);
    expect(keeping.entries.map((entry) => entry.seq)).toEqual([0, 1]);
    expect(keeping.entries[1]!.prev_hash).toBe(keeping.entries[0]!.hash);
    expect(Object.isFrozen(keeping.entries[0])).toBe(true);
  });

  it("stores raw payloads once, by the content hash of their redacted form", () => {
    const redactor = new SecretRedactor();
    redactor.addSecret("sk-secret-0001", "API_KEY");
    const writer = createInMemoryTranscriptWriter();
    const { transcript } = startTranscript({ redactor, writer });
    const payload = { messages: [{ role: "user", content: "key sk-secret-0001" }] };
    const hash = transcript.storeRaw(payload);
    expect(transcript.storeRaw(payload)).toBe(hash);
    expect(hash).toBe(contentHash({ messages: [{ role: "user", content: "key [REDACTED:API_KEY]" }] }));
    expect([...writer.raw.keys()]).toEqual([hash]);
  });

  it("records undefined actions and results as null", () => {
    const { transcript } = startTranscript({ keepEntries: true });
    transcript.append(entryInput(0, { action: undefined, result: undefined }));
    expect(transcript.entries[0]!.action).toBeNull();
    expect(transcript.entries[0]!.action_hash).toBe(contentHash(null));
  });

  it("refuses what JSON cannot hold and leaves the chain unchanged", () => {
    const { transcript } = startTranscript();
    const head = transcript.headHash;
    expect(codeOf(() => transcript.append(entryInput(0, { action: { count: 10n } })))).toBe(
      "TRANSCRIPT_INVALID",
    );
    expect(codeOf(() => transcript.append(entryInput(0, { turn: Number.NaN })))).toBe("TRANSCRIPT_INVALID");
    expect(codeOf(() => transcript.storeRaw({ handler: () => 1 }))).toBe("TRANSCRIPT_INVALID");
    expect(transcript.headHash).toBe(head);
    expect(transcript.entryCount).toBe(0);
  });

  it("checks the contract it writes", () => {
    const writer = createInMemoryTranscriptWriter();
    const contract = contractFixture();
    const transcript = createHashChainTranscript({
      runId: "run_0001",
      contractHash: contract.contract_hash,
      adapterVersion: contract.adapter_version,
      modelProfileId: contract.model_profile_id,
      redactor: new SecretRedactor(),
      writer,
    });
    expect(codeOf(() => transcript.writeContract(contractFixture({ max_inferences: 9 })))).toBe(
      "CONTRACT_INVALID",
    );
    transcript.writeContract(contract);
    expect(writer.contract).toBe(contract);
    expect(codeOf(() => transcript.writeContract(contract))).toBe("ARGUMENT_INVALID");
  });

  it("refuses to persist a contract that contains a registered secret", () => {
    const contract = contractFixture({ system_prompt: "Use the key sk-secret-0001." });
    const redactor = new SecretRedactor();
    redactor.addSecret("sk-secret-0001", "API_KEY");
    const writer = createInMemoryTranscriptWriter();
    const transcript = createHashChainTranscript({
      runId: "run_0001",
      contractHash: contract.contract_hash,
      adapterVersion: contract.adapter_version,
      modelProfileId: contract.model_profile_id,
      redactor,
      writer,
    });
    expect(codeOf(() => transcript.writeContract(contract))).toBe("CONTRACT_INVALID");
    expect(writer.contract).toBeNull();
  });

  it("writes a header with the injected clock and refuses a malformed contract hash", () => {
    const { transcript, contract } = startTranscript();
    expect(transcript.header).toEqual({
      v: 1,
      run_id: "run_0001",
      contract_hash: contract.contract_hash,
      adapter_version: "adapter-1",
      model_profile_id: "openai-compatible/default",
      genesis_hash: computeGenesisHash(contract.contract_hash, "run_0001"),
      created_at: "2026-01-01T00:00:00.000Z",
    });
    expect(
      codeOf(() =>
        createHashChainTranscript({
          runId: "run_0001",
          contractHash: "not-a-hash",
          adapterVersion: "a",
          modelProfileId: "p",
          redactor: new SecretRedactor(),
        }),
      ),
    ).toBe("ARGUMENT_INVALID");
  });
});
