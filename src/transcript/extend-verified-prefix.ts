import type { LineBlockResult } from "./check-transcript-line-block.js";
import type { RawPayloadIndex, VerifiedPrefix } from "./transcript-entry-verifier.js";

/**
 * The prefix extended by a checked block of the lines that follow it, or null when the block does not pass as
 * a whole: a line in it stopped the check, its first line does not continue the prefix (seq and prev_hash), a
 * line references a raw payload that is missing or corrupt, or it holds fewer lines than `expectedLines`
 * (when given). The caller then verifies that block line by line, from its first line, to name the fault.
 */
export function extendVerifiedPrefix(
  prefix: VerifiedPrefix,
  block: LineBlockResult,
  rawIndex: RawPayloadIndex,
  expectedLines?: number,
): VerifiedPrefix | null {
  if (block.stoppedAt !== null) return null;
  if (expectedLines !== undefined && block.passed !== expectedLines) return null;
  if (block.passed === 0) return prefix;
  if (block.firstSeq !== prefix.lines || block.firstPrevHash !== prefix.headHash) return null;
  for (const hash of block.rawReferenceHashes) if (rawIndex.get(hash) !== true) return null;
  return { lines: prefix.lines + block.passed, headHash: block.lastHash };
}
