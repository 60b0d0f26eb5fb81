import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { computeContractHash } from "../contract/contract-hash.js";
import { CharterError } from "../foundation/charter-error.js";
import { computeGenesisHash } from "./chain-link-hash.js";
import { bindRawRequestParts, checkRawPayloadText } from "./raw-request-parts.js";
import { runDirectoryLayout } from "./run-directory-layout.js";
import {
  type TranscriptHeader,
  transcriptFormatVersion,
  transcriptHeaderStringFields,
} from "./transcript-entry.js";
import { createTranscriptEntryVerifier, type RawPayloadIndex } from "./transcript-entry-verifier.js";
import { readTranscriptLines } from "./transcript-line-reader.js";
import type {
  VerificationFailure,
  VerificationReasonCode,
  VerificationReport,
} from "./verification-report.js";
import { verifyRunFilesInBlocks } from "./verify-run-files-in-blocks.js";

/** Raw payloads by content hash, as stored: the canonical JSON text or its bytes. */
export type RawPayloadStore = ReadonlyMap<string, string | Uint8Array>;

/**
 * Verifies a run held in memory (for example by the in-memory writer): the contract hash, then every
 * entry in order (hashes, links, seq, raw payload references), then the raw payloads themselves.
 */
export function verifyEntries(
  header: TranscriptHeader,
  contract: unknown,
  entries: Iterable<unknown>,
  rawStore: RawPayloadStore,
): VerificationReport {
  const checked = checkHeaderAndContract(header, contract);
  if ("failure" in checked) return checked.failure;
  const rawIndex = new Map<string, boolean>();
  const composites = new Map<string, readonly string[]>();
  for (const [hash, content] of rawStore) {
    const check = checkRawPayloadText(hash, content);
    rawIndex.set(hash, check.intact);
    if (check.parts !== null) composites.set(hash, check.parts);
  }
  bindRawRequestParts(rawIndex, composites);
  const verifier = createTranscriptEntryVerifier(checked.header, rawIndex);
  for (const entry of entries) {
    const failure = verifier.checkEntry(entry);
    if (failure !== null) return report(verifier.verified, verifier.headHash, failure);
  }
  return finish(verifier.verified, verifier.headHash, rawIndex);
}

/**
 * Verifies a run directory written by the JSONL writer. Reports the first problem found, in the order a
 * reader meets them: header, contract, raw payloads referenced by entries, entries in seq order, a line cut
 * off at the end, then corrupt raw payloads no entry references. Throws RUN_NOT_FOUND when the directory or
 * its header.json does not exist.
 */
export async function verifyRunDirectory(runDirectory: string): Promise<VerificationReport> {
  await requireRunDirectory(runDirectory);
  const headerText = await readOptional(join(runDirectory, runDirectoryLayout.header));
  if (headerText === null) {
    throw new CharterError("RUN_NOT_FOUND", `${runDirectory} holds no ${runDirectoryLayout.header}`, {
      details: { runDirectory, missing: runDirectoryLayout.header },
    });
  }
  const header = parseJson(headerText);
  if (header === unparsable) {
    return runFailure(null, "MALFORMED_LINE", `${runDirectoryLayout.header} is not valid JSON`);
  }
  const contractText = await readOptional(join(runDirectory, runDirectoryLayout.contract));
  const contract = contractText === null ? missingContract : parseJson(contractText);
  const checked = checkHeaderAndContract(header, contract);
  if ("failure" in checked) return checked.failure;

  const transcriptPath = join(runDirectory, runDirectoryLayout.transcript);
  // Raw payloads and the lines that pass are checked in parallel ranges; the entry verifier takes over after
  // the longest prefix of lines that passed, and so meets the first fault, if any, as it would have alone.
  const { rawIndex, prefix, prefixEnd } = await verifyRunFilesInBlocks(
    transcriptPath,
    join(runDirectory, runDirectoryLayout.raw),
    {
      contractHash: checked.header.contract_hash,
      adapterVersion: checked.header.adapter_version,
      modelProfileId: checked.header.model_profile_id,
    },
    checked.header.genesis_hash,
  );
  const verifier = createTranscriptEntryVerifier(checked.header, rawIndex, prefix);
  let failure: VerificationFailure | null = null;
  let read: Awaited<ReturnType<typeof readTranscriptLines>>;
  try {
    read = await readTranscriptLines(
      transcriptPath,
      (line, lineIndex) => {
        if (line === null) {
          failure = lineFailure(
            verifier.expectedSeq,
            `${runDirectoryLayout.transcript} line ${lineIndex + 1}`,
            "is not valid UTF-8",
          );
          return false;
        }
        failure = verifier.checkLine(line, lineIndex + 1);
        return failure === null;
      },
      { offset: prefixEnd, lineIndex: prefix.lines },
    );
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code !== "ENOENT") throw error;
    return report(0, verifier.headHash, {
      seq: 0,
      step_id: null,
      reason_code: "MALFORMED_LINE",
      detail: `${runDirectoryLayout.transcript} is missing`,
    });
  }
  if (failure !== null) return report(verifier.verified, verifier.headHash, failure);
  if (read.incompleteLastLine !== null) {
    return report(
      verifier.verified,
      verifier.headHash,
      lineFailure(
        verifier.expectedSeq,
        `${runDirectoryLayout.transcript} line ${read.lines + 1}`,
        "is incomplete (no final newline): the transcript was cut off while it was written",
      ),
    );
  }
  return finish(verifier.verified, verifier.headHash, rawIndex);
}

const unparsable = Symbol("unparsable");
const missingContract = Symbol("missing contract");

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return unparsable;
  }
}

function checkHeaderAndContract(
  value: unknown,
  contract: unknown,
): { header: TranscriptHeader } | { failure: VerificationReport } {
  const file = runDirectoryLayout.header;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { failure: runFailure(null, "MALFORMED_LINE", `${file} is not a JSON object`) };
  }
  const header = value as Record<string, unknown>;
  if (header.v !== transcriptFormatVersion) {
    return {
      failure:
        typeof header.v === "number"
          ? runFailure(
              null,
              "UNSUPPORTED_VERSION",
              `${file} has format version ${header.v}; this Charter reads 1`,
            )
          : runFailure(null, "MALFORMED_LINE", `${file} has no format version v`),
    };
  }
  for (const field of transcriptHeaderStringFields) {
    if (typeof header[field] !== "string") {
      return { failure: runFailure(null, "MALFORMED_LINE", `${file}: ${field} is missing or not a string`) };
    }
  }
  const checked = header as unknown as TranscriptHeader;
  const genesisHash = computeGenesisHash(checked.contract_hash, checked.run_id);
  if (checked.genesis_hash !== genesisHash) {
    return {
      failure: runFailure(
        null,
        "CHAIN_LINK_MISMATCH",
        `${file}: genesis_hash is ${checked.genesis_hash} but contract_hash and run_id give ${genesisHash}`,
      ),
    };
  }
  const contractProblem = findContractProblem(contract, checked.contract_hash);
  if (contractProblem !== null) {
    return {
      failure: report(0, genesisHash, {
        seq: null,
        step_id: null,
        reason_code: "CONTRACT_HASH_MISMATCH",
        detail: `${runDirectoryLayout.contract}: ${contractProblem}`,
      }),
    };
  }
  return { header: checked };
}

function findContractProblem(contract: unknown, expected: string): string | null {
  if (contract === missingContract) return "the file is missing";
  if (contract === unparsable) return "the file is not valid JSON";
  if (typeof contract !== "object" || contract === null || Array.isArray(contract))
    return "not a JSON object";
  let actual: string;
  try {
    actual = computeContractHash(contract as Parameters<typeof computeContractHash>[0]);
  } catch {
    return "the contract cannot be canonicalised";
  }
  if (actual !== expected) return `the contract hashes to ${actual} but the header records ${expected}`;
  const recorded = (contract as { contract_hash?: unknown }).contract_hash;
  if (recorded !== undefined && recorded !== expected) {
    return `the contract's contract_hash field is ${String(recorded)} but the header records ${expected}`;
  }
  return null;
}

function finish(entries: number, headHash: string, rawIndex: RawPayloadIndex): VerificationReport {
  // Corrupt payloads an entry references were reported at that entry; these are the unreferenced ones.
  const corrupt = [...rawIndex].filter(([, intact]) => !intact).map(([hash]) => hash);
  if (corrupt.length > 0) {
    corrupt.sort();
    return report(entries, headHash, {
      seq: null,
      step_id: null,
      reason_code: "RAW_PAYLOAD_HASH_MISMATCH",
      detail: `${runDirectoryLayout.raw}/${corrupt[0]}.json does not hash to its name, or names a request part that is missing or damaged`,
    });
  }
  return { ok: true, entries, head_hash: headHash, first_bad_entry: null };
}

function lineFailure(seq: number, location: string, problem: string): VerificationFailure {
  return { seq, step_id: null, reason_code: "MALFORMED_LINE", detail: `${location} ${problem}` };
}

function runFailure(
  headHash: string | null,
  reasonCode: VerificationReasonCode,
  detail: string,
): VerificationReport {
  return report(0, headHash, { seq: null, step_id: null, reason_code: reasonCode, detail });
}

function report(entries: number, headHash: string | null, failure: VerificationFailure): VerificationReport {
  return { ok: false, entries, head_hash: headHash, first_bad_entry: failure };
}

async function requireRunDirectory(runDirectory: string): Promise<void> {
  try {
    if ((await stat(runDirectory)).isDirectory()) return;
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code !== "ENOENT") throw error;
  }
  throw new CharterError("RUN_NOT_FOUND", `no run directory at ${runDirectory}`, {
    details: { runDirectory },
  });
}

async function readOptional(path: string): Promise<string | null> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === "ENOENT") return null;
    throw error;
  }
}
