import { computeContractHash } from "../contract/contract-hash.js";
import type { ExecutionContract } from "../contract/execution-contract.js";
import { contractHashMatches } from "../contract/verified-contracts.js";
import { canonicalJson } from "../foundation/canonical-json.js";
import { CharterError } from "../foundation/charter-error.js";
import { blake3Hex } from "../foundation/content-hash.js";
import { type RuntimeEnvironment, systemEnvironment } from "../foundation/environment.js";
import type { SecretRedactor } from "../foundation/secret-redactor.js";
import type { TranscriptEntryInput, TranscriptSink } from "../session/transcript-sink.js";
import { computeGenesisHash, createChainLinkPreimage, encodeChainLink } from "./chain-link-hash.js";
import { rawRequestFormat, rawRequestVersion } from "./raw-request-parts.js";
import { isRawPayloadHash } from "./run-directory-layout.js";
import { type TranscriptEntry, type TranscriptHeader, transcriptFormatVersion } from "./transcript-entry.js";
import { formatTranscriptLine } from "./transcript-line.js";
import type { TranscriptWriter } from "./transcript-writer.js";

export interface HashChainTranscriptOptions {
  readonly runId: string;
  readonly contractHash: string;
  readonly adapterVersion: string;
  readonly modelProfileId: string;
  /** Applied to every action, result and raw payload before it is hashed, kept or written. */
  readonly redactor: SecretRedactor;
  /** Where records go; without one the transcript only computes the chain (and keeps entries if asked). */
  readonly writer?: TranscriptWriter;
  /** Keep every entry in memory (for a library caller's result); off by default to keep memory flat. */
  readonly keepEntries?: boolean;
  /**
   * Continue a chain already stored (resume): the next entry gets seq `entryCount` and links to `headHash`.
   * The same header is handed to the writer again (a run-store writer checks it against the stored run).
   */
  readonly continueFrom?: {
    readonly entryCount: number;
    readonly headHash: string;
    readonly createdAt: string;
  };
  /** The clock for the header's `created_at`. */
  readonly environment?: RuntimeEnvironment;
}

export interface HashChainTranscript extends TranscriptSink {
  readonly header: TranscriptHeader;
  /** The entries appended so far when `keepEntries` is on; empty otherwise. */
  readonly entries: readonly TranscriptEntry[];
  /**
   * Stores the run's full contract beside the chain so that verification can recompute its hash.
   * Throws CONTRACT_INVALID when the contract does not hash to the transcript's contract hash, or when it
   * contains a registered secret (a redacted contract could no longer be verified, and an unredacted one
   * would put the secret in a file).
   */
  writeContract(contract: ExecutionContract): void;
  /** Flushes and closes the writer. */
  close(): Promise<void>;
}

/**
 * The session's transcript sink: redacts each entry, hashes it into the chain (see chain-link-hash.ts for
 * the exact formula) and hands the finished record to the writer. Only the head hash and the count are
 * kept, unless `keepEntries` asks for the entries too.
 */
export function createHashChainTranscript(options: HashChainTranscriptOptions): HashChainTranscript {
  const { runId, contractHash, adapterVersion, modelProfileId, redactor, writer } = options;
  if (runId.length === 0) {
    throw new CharterError("ARGUMENT_INVALID", "a transcript needs a non-empty run id", {
      details: { runId },
    });
  }
  if (!isRawPayloadHash(contractHash)) {
    throw new CharterError(
      "ARGUMENT_INVALID",
      "a transcript needs the contract hash as 64 lowercase hex digits",
      {
        details: { contractHash },
      },
    );
  }
  const environment = options.environment ?? systemEnvironment;
  const keptEntries: TranscriptEntry[] | null = options.keepEntries === true ? [] : null;
  const linkPreimage = createChainLinkPreimage({ contractHash, adapterVersion, modelProfileId });
  const genesisHash = computeGenesisHash(contractHash, runId);
  const header: TranscriptHeader = Object.freeze({
    v: transcriptFormatVersion,
    run_id: runId,
    contract_hash: contractHash,
    adapter_version: adapterVersion,
    model_profile_id: modelProfileId,
    genesis_hash: genesisHash,
    created_at: options.continueFrom?.createdAt ?? new Date(environment.now()).toISOString(),
  });
  // Also when continuing: a run-store writer checks that the header is the stored run's.
  writer?.writeHeader(header);

  let headHash = options.continueFrom?.headHash ?? genesisHash;
  let entryCount = options.continueFrom?.entryCount ?? 0;
  let contractWritten = false;
  // The hash of each request part stored so far, by its JSON text: the elements of a provider request's arrays
  // recur turn after turn (the conversation only grows), and JSON.stringify is far cheaper than redacting,
  // canonicalising and hashing them again. Released with the transcript at the end of the run.
  const storedParts = new Map<string, string>();

  function storeRaw(payload: unknown): string {
    const json = encode(redactor.redactValue(payload ?? null), "raw payload", null);
    const hash = blake3Hex(json);
    writer?.writeRaw(hash, json);
    return hash;
  }

  function storePart(element: unknown): string {
    const key = JSON.stringify(element) ?? "null";
    let hash = storedParts.get(key);
    if (hash === undefined) {
      hash = storeRaw(element);
      storedParts.set(key, hash);
    }
    return hash;
  }

  const transcript: HashChainTranscript = {
    header,
    get entries() {
      return keptEntries ?? [];
    },
    get entryCount() {
      return entryCount;
    },
    get headHash() {
      return headHash;
    },

    append(input: TranscriptEntryInput): string {
      const stepId = redactor.redactString(input.step_id);
      const modelFingerprint =
        input.model_fingerprint === null ? null : redactor.redactString(input.model_fingerprint);
      const action = redactor.redactValue(input.action ?? null);
      const result = redactor.redactValue(input.result ?? null);
      // Serialised once: the same canonical text is hashed and, when there is a writer, written.
      const actionJson = encode(action, "action", stepId);
      const resultJson = encode(result, "result", stepId);
      const actionHash = blake3Hex(actionJson);
      const resultHash = blake3Hex(resultJson);
      const seq = entryCount;
      // Encoded once: the same member texts make the link's preimage and the line.
      const link = encodeChainLink({
        prev: headHash,
        state: input.state,
        action_hash: actionHash,
        result_hash: resultHash,
        model_fingerprint: modelFingerprint,
        seq,
        step_id: stepId,
        turn: input.turn,
        timestamp: input.timestamp,
      });
      const hash = blake3Hex(linkPreimage(link));
      // Without a writer or kept entries, the head is all there is to keep.
      if (writer !== undefined || keptEntries !== null) {
        const entry: TranscriptEntry = Object.freeze({
          v: transcriptFormatVersion,
          seq,
          step_id: stepId,
          state: input.state,
          turn: input.turn,
          timestamp: input.timestamp,
          action,
          result,
          action_hash: actionHash,
          result_hash: resultHash,
          model_fingerprint: modelFingerprint,
          prev_hash: headHash,
          hash,
        });
        writer?.appendEntry(entry, formatTranscriptLine(link, actionJson, resultJson, hash));
        keptEntries?.push(entry);
      }
      headHash = hash;
      entryCount = seq + 1;
      return hash;
    },

    storeRaw,

    storeRawRequest(body: unknown): string {
      if (body === null || typeof body !== "object" || Array.isArray(body)) return storeRaw(body);
      const head: Record<string, unknown> = {};
      const parts: Record<string, string[]> = {};
      for (const [key, value] of Object.entries(body)) {
        if (Array.isArray(value)) parts[key] = value.map(storePart);
        else head[key] = value;
      }
      return storeRaw({ format: rawRequestFormat, head, parts, version: rawRequestVersion });
    },

    writeContract(contract: ExecutionContract): void {
      if (contractWritten) {
        throw new CharterError("ARGUMENT_INVALID", "the contract of this run was already written", {
          details: { runId },
        });
      }
      if (contract.contract_hash !== contractHash || !contractHashMatches(contract)) {
        const actualHash = computeContractHash(contract);
        throw new CharterError(
          "CONTRACT_INVALID",
          "the contract does not hash to the transcript's contract hash",
          {
            details: { runId, expected: contractHash, actual: actualHash },
          },
        );
      }
      // String values only: a short secret that happens to spell part of a field name is not in the contract.
      if (redactor.containsSecret(contract)) {
        throw new CharterError("CONTRACT_INVALID", "the contract contains a registered secret", {
          details: { runId, contractHash, reason: "contract_contains_secret" },
        });
      }
      contractWritten = true;
      writer?.writeContract(contract);
    },

    flush(): Promise<void> {
      return writer === undefined ? Promise.resolve() : writer.flush();
    },

    close(): Promise<void> {
      return writer === undefined ? Promise.resolve() : writer.close();
    },
  };
  writer?.connect?.(transcript);
  return transcript;
}

function encode(value: unknown, field: string, stepId: string | null): string {
  try {
    return canonicalJson(value);
  } catch (error) {
    // canonicalJson refuses what JSON cannot hold (functions, bigints, non-finite numbers).
    throw new CharterError("TRANSCRIPT_INVALID", `the transcript ${field} is not JSON-serialisable`, {
      details: { field, stepId },
      cause: error,
    });
  }
}
