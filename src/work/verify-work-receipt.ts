import { readFile, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { CharterError } from "../foundation/charter-error.js";
import { gitText } from "./git-command.js";
import { snapshotListing, stateHash } from "./state-listing.js";
import { listReceipts, receiptChain, receiptHash, type WorkReceipt } from "./work-receipt.js";
import type { WorkRepository } from "./work-repository.js";

export interface ReceiptVerification {
  readonly ok: boolean;
  readonly receipt: WorkReceipt;
  readonly path: string;
  /** What did not hold, each as one sentence. */
  readonly problems: readonly string[];
}

/** Finds a receipt by its path (the file or its run folder), its receipt id or its run id. */
export async function findWorkReceipt(
  repository: WorkRepository,
  reference: string,
): Promise<{ receipt: WorkReceipt; path: string }> {
  const candidate = resolve(reference);
  const isFolder = await stat(candidate).then(
    (stats) => stats.isDirectory(),
    () => null,
  );
  if (isFolder !== null) {
    const path = isFolder ? join(candidate, "RECEIPT.json") : candidate;
    try {
      return { receipt: JSON.parse(await readFile(path, "utf8")) as WorkReceipt, path };
    } catch (error) {
      throw new CharterError("RECEIPT_INVALID", `${path} is not a readable receipt: ${String(error)}`, {
        details: { path },
      });
    }
  }
  const found = (await listReceipts(repository)).find(
    ({ receipt }) => receipt.receipt_id === reference || receipt.run_id === reference,
  );
  if (found === undefined) {
    throw new CharterError(
      "RECEIPT_NOT_FOUND",
      `no receipt ${reference} in ${join(repository.root, ".charter", "work")}: give a receipt id, a run id or a RECEIPT.json path`,
      { details: { reference, repository: repository.root } },
    );
  }
  return found;
}

async function snapshotHash(repository: WorkRepository, commit: string): Promise<string | null> {
  const exists = await gitText(["cat-file", "-t", commit], {
    cwd: repository.root,
    acceptedExitCodes: [1, 128],
  });
  return exists === "commit" ? stateHash(await snapshotListing(repository, commit)) : null;
}

/**
 * Checks a receipt: its own hash (BLAKE3 of its canonical JSON without the hash), its place in the repository's
 * receipt chain (its predecessor exists, and the chain from its head reaches it), and that its snapshots hash to
 * the hashes it records (the after snapshot to `after_hash`, and that to `output_hash` when the change stayed).
 */
export async function verifyWorkReceipt(
  repository: WorkRepository,
  reference: string,
): Promise<ReceiptVerification> {
  const { receipt, path } = await findWorkReceipt(repository, reference);
  const problems: string[] = [];
  const computed = receiptHash(receipt);
  if (computed !== receipt.receipt_hash) {
    problems.push(
      `the receipt's hash is ${receipt.receipt_hash} but its content hashes to ${computed}: it was changed`,
    );
  }
  const chain = await receiptChain(repository);
  const position = chain.findIndex((entry) => entry.receipt_hash === receipt.receipt_hash);
  if (position === -1) {
    problems.push("the repository's receipt chain, followed from its head, does not reach this receipt");
  } else {
    const expectedPrevious = chain[position + 1]?.receipt_hash ?? null;
    if (expectedPrevious !== receipt.previous_receipt_hash) {
      problems.push(
        `the receipt names ${receipt.previous_receipt_hash ?? "no"} previous receipt, the chain has ${expectedPrevious ?? "none"}`,
      );
    }
  }
  const before = await snapshotHash(repository, receipt.before_commit);
  if (before === null)
    problems.push(`the before snapshot ${receipt.before_commit} is missing from the repository`);
  else if (before !== receipt.before_hash) {
    problems.push(`the before snapshot hashes to ${before}, the receipt says ${receipt.before_hash}`);
  }
  if (receipt.after_commit !== null) {
    const after = await snapshotHash(repository, receipt.after_commit);
    if (after === null)
      problems.push(`the after snapshot ${receipt.after_commit} is missing from the repository`);
    else if (after !== receipt.after_hash) {
      problems.push(`the after snapshot hashes to ${after}, the receipt says ${receipt.after_hash}`);
    }
  }
  const expectedOutput = receipt.status === "success" ? receipt.after_hash : receipt.before_hash;
  if (receipt.output_hash !== expectedOutput) {
    problems.push(
      `output_hash ${receipt.output_hash} is not the ${receipt.status === "success" ? "after" : "before"} snapshot's hash ${expectedOutput}`,
    );
  }
  return { ok: problems.length === 0, receipt, path, problems };
}
