import { CharterError } from "../foundation/charter-error.js";
import { blake3Hex, contentHash } from "../foundation/content-hash.js";
import { transcriptFormatVersion } from "./transcript-entry.js";

/**
 * The transcript's hash chain (seed 002 Phase 4). Exactly:
 *
 *   H(-1) = contentHash({ genesis: contract_hash, run_id })
 *   H(n)  = contentHash({ v: 1, prev: H(n-1), contract_hash, state, action_hash, result_hash,
 *                         adapter_version, model_profile_id, model_fingerprint,
 *                         seq, step_id, turn, timestamp })
 *
 * where contentHash is BLAKE3 (hex) of RFC 8785 canonical JSON, action_hash = contentHash(action) and
 * result_hash = contentHash(result), both taken after secret redaction.
 *
 * The seed's formula binds prev, contract_hash, state, action_hash, result_hash, adapter_version,
 * model_profile_id and model_fingerprint; the link also binds v, seq, step_id, turn and timestamp so that
 * every field of an entry is covered by the chain and no byte of a transcript line can change unnoticed.
 */
export interface ChainLinkInput {
  readonly prev: string;
  readonly state: string;
  readonly action_hash: string;
  readonly result_hash: string;
  readonly model_fingerprint: string | null;
  readonly seq: number;
  readonly step_id: string;
  readonly turn: number;
  readonly timestamp: number;
}

/** What every link of one run's chain shares. */
export interface ChainBinding {
  readonly contractHash: string;
  readonly adapterVersion: string;
  readonly modelProfileId: string;
}

/** H(-1) for a run. */
export function computeGenesisHash(contractHash: string, runId: string): string {
  return contentHash({ genesis: contractHash, run_id: runId });
}

/** The reference definition of a link: contentHash over the preimage object. Slower than the hasher. */
export function computeChainLinkHash(binding: ChainBinding, link: ChainLinkInput): string {
  return contentHash({
    v: transcriptFormatVersion,
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
  });
}

/**
 * A link with every member already in its canonical JSON spelling: strings quoted and escaped as
 * JSON.stringify does, numbers in ECMAScript's shortest form, hashes as bare lowercase hex. The writer
 * encodes once and uses the texts for both the line and the link; the verifier takes them from the line.
 */
export interface EncodedChainLink {
  /** Hex. */
  readonly prev: string;
  readonly state: string;
  /** Hex. */
  readonly action_hash: string;
  /** Hex. */
  readonly result_hash: string;
  /** A JSON string or `null`. */
  readonly model_fingerprint: string;
  readonly seq: string;
  readonly step_id: string;
  readonly turn: string;
  readonly timestamp: string;
}

/** Spells a link's members as canonical JSON; refuses numbers JSON cannot hold (TRANSCRIPT_INVALID). */
export function encodeChainLink(link: ChainLinkInput): EncodedChainLink {
  requireFinite(link.seq, "seq");
  requireFinite(link.turn, "turn");
  requireFinite(link.timestamp, "timestamp");
  return {
    prev: link.prev,
    state: JSON.stringify(link.state),
    action_hash: link.action_hash,
    result_hash: link.result_hash,
    model_fingerprint: link.model_fingerprint === null ? "null" : JSON.stringify(link.model_fingerprint),
    // For finite numbers, template conversion is JSON.stringify's (and RFC 8785's) shortest form.
    seq: `${link.seq}`,
    step_id: JSON.stringify(link.step_id),
    turn: `${link.turn}`,
    timestamp: `${link.timestamp}`,
  };
}

/**
 * Returns a function computing the same hash as `computeChainLinkHash` for one run. Hashes must be
 * lowercase hex, as every hash Charter computes is.
 */
export function createChainLinkHasher(binding: ChainBinding): (link: ChainLinkInput) => string {
  const preimage = createChainLinkPreimage(binding);
  return (link) => blake3Hex(preimage(encodeChainLink(link)));
}

/**
 * The canonical JSON text `computeChainLinkHash` hashes, written directly from encoded members in RFC 8785
 * key order, the run's constant members encoded once, instead of building and sorting an object per entry.
 */
export function createChainLinkPreimage(binding: ChainBinding): (link: EncodedChainLink) => string {
  const constants = `","adapter_version":${JSON.stringify(binding.adapterVersion)},"contract_hash":${JSON.stringify(binding.contractHash)},"model_fingerprint":`;
  const modelProfileId = `,"model_profile_id":${JSON.stringify(binding.modelProfileId)},"prev":"`;
  const version = `,"v":${transcriptFormatVersion}}`;
  return (link) =>
    `{"action_hash":"${link.action_hash}${constants}${link.model_fingerprint}${modelProfileId}${link.prev}","result_hash":"${link.result_hash}","seq":${link.seq},"state":${link.state},"step_id":${link.step_id},"timestamp":${link.timestamp},"turn":${link.turn}${version}`;
}

function requireFinite(value: number, field: string): void {
  if (!Number.isFinite(value)) {
    throw new CharterError("TRANSCRIPT_INVALID", `transcript entry field ${field} must be a finite number`, {
      details: { field, value: String(value) },
    });
  }
}
