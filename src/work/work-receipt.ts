import { mkdir, readdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { contentHash } from "../foundation/content-hash.js";
import type { WorkRepository } from "./work-repository.js";

/** `conflict`: admitted in its own worktree, but its change conflicted with an earlier item of its plan's level. */
export type WorkStatus = "success" | "failure" | "denied" | "timeout" | "conflict";

export interface WorkMetrics {
  readonly execution_time_ms: number;
  readonly tool_ops_count: number;
  readonly delta_size: number;
  readonly files_touched: number;
  readonly tests_passed?: number;
  readonly tests_failed?: number;
}

/** RECEIPT.json: what one work item did, whatever its status. Paths are repository-relative. */
export interface WorkReceipt {
  readonly format: "charter-work-receipt/1";
  readonly receipt_id: string;
  readonly work_item_id: string;
  /** The work item as run (defaults applied) and BLAKE3 of its canonical JSON. */
  readonly work_item: unknown;
  readonly work_item_hash: string;
  readonly agent_id: string;
  readonly contract_hash: string | null;
  readonly run_id: string;
  readonly transcript_head: string | null;
  readonly status: WorkStatus;
  readonly error: string | null;
  readonly denial_reason: string | null;
  readonly before_hash: string;
  readonly before_commit: string;
  /** The state the agent left (null when it never got as far as a snapshot of it). */
  readonly after_hash: string | null;
  readonly after_commit: string | null;
  /** The final state: the after state when admitted, the before state after a rollback. */
  readonly output_hash: string;
  readonly modified_files: readonly string[];
  readonly created_files: readonly string[];
  readonly deleted_files: readonly string[];
  readonly artifact_hashes: Readonly<Record<string, string>>;
  readonly metrics: WorkMetrics;
  readonly test_output_hash: string | null;
  /** The commit `--commit` made on the current branch. */
  readonly commit: string | null;
  /** The receipt before this one in the repository's chain (null for the first). */
  readonly previous_receipt_hash: string | null;
  readonly created_at: string;
  /** BLAKE3 of the RFC 8785 canonical JSON of every other field. */
  readonly receipt_hash: string;
}

export function receiptHash(receipt: Omit<WorkReceipt, "receipt_hash"> | WorkReceipt): string {
  const { receipt_hash: _ignored, ...content } = receipt as WorkReceipt;
  return contentHash(content);
}

/** `.charter/work` in the working tree: one folder per run. */
export function receiptsFolder(repository: WorkRepository): string {
  return join(repository.root, ".charter", "work");
}

/** Creates `.charter/work/<run-id>/` with a `.gitignore` that ignores the folder itself (and so every receipt). */
export async function createRunFolder(repository: WorkRepository, runId: string): Promise<string> {
  const folder = join(receiptsFolder(repository), runId);
  await mkdir(folder, { recursive: true });
  await writeFile(
    join(folder, ".gitignore"),
    "# Charter work item records: never part of the repository\n*\n",
  );
  return folder;
}

// The chain's head is shared by every worktree of the repository: in git's common folder.
function chainHeadPath(repository: WorkRepository): string {
  return join(repository.commonDirectory, "charter-receipt-chain-head");
}

export async function readChainHead(repository: WorkRepository): Promise<string | null> {
  try {
    const text = (await readFile(chainHeadPath(repository), "utf8")).trim();
    return text === "" ? null : text;
  } catch {
    return null;
  }
}

/** A receipt before it takes its place in the chain: everything but the previous receipt's hash and its own. */
export type WorkReceiptContent = Omit<WorkReceipt, "receipt_hash" | "previous_receipt_hash">;

/** Writes RECEIPT.json, then moves the chain head to it. The caller holds the working tree's lock. */
export async function writeReceipt(
  repository: WorkRepository,
  folder: string,
  content: WorkReceiptContent,
): Promise<{ receipt: WorkReceipt; path: string }> {
  const unhashed = { ...content, previous_receipt_hash: await readChainHead(repository) };
  const receipt: WorkReceipt = { ...unhashed, receipt_hash: receiptHash(unhashed) };
  const path = join(folder, "RECEIPT.json");
  await writeFile(path, `${JSON.stringify(receipt, null, 2)}\n`);
  const temporary = `${chainHeadPath(repository)}.${process.pid}.tmp`;
  await writeFile(temporary, `${receipt.receipt_hash}\n`);
  await rename(temporary, chainHeadPath(repository));
  return { receipt, path };
}

/** Every receipt in the working tree's `.charter/work`, with its path. */
export async function listReceipts(
  repository: WorkRepository,
): Promise<{ receipt: WorkReceipt; path: string }[]> {
  const folder = receiptsFolder(repository);
  const names = await readdir(folder).catch(() => [] as string[]);
  const found: { receipt: WorkReceipt; path: string }[] = [];
  for (const name of names.sort()) {
    const path = join(folder, name, "RECEIPT.json");
    try {
      found.push({ receipt: JSON.parse(await readFile(path, "utf8")) as WorkReceipt, path });
    } catch {
      // A folder without a (readable) receipt: a run still going, or not a run.
    }
  }
  return found;
}

/** The receipt chain from its head backwards, as far as the receipts in this working tree reach. */
export async function receiptChain(repository: WorkRepository): Promise<WorkReceipt[]> {
  const byHash = new Map(
    (await listReceipts(repository)).map(({ receipt }) => [receipt.receipt_hash, receipt]),
  );
  const chain: WorkReceipt[] = [];
  let next = await readChainHead(repository);
  const seen = new Set<string>();
  while (next !== null && !seen.has(next)) {
    seen.add(next);
    const receipt = byHash.get(next);
    if (receipt === undefined) break;
    chain.push(receipt);
    next = receipt.previous_receipt_hash;
  }
  return chain;
}
