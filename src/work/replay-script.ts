import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { WorkReceipt } from "./work-receipt.js";

function shellQuoted(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * Writes `replay-<work-item-id>.sh` beside a successful item's receipt: a portable bash script that checks out the
 * before snapshot in a temporary worktree, runs `charter work replay` there (`$CHARTER`, default `charter`; extra
 * arguments such as `--store` are passed on) and compares the state hash with the receipt's.
 */
export async function writeReplayScript(
  folder: string,
  repositoryRoot: string,
  receiptPath: string,
  receipt: WorkReceipt,
): Promise<string> {
  const path = join(folder, `replay-${receipt.work_item_id}.sh`);
  const script = `#!/usr/bin/env bash
# Replays work item ${receipt.work_item_id} (run ${receipt.run_id}) from its before snapshot, with the recorded
# model answers and the workspace tools live, and checks that it ends in the state its receipt records.
# Usage: ${`replay-${receipt.work_item_id}.sh`} [--store URL] (CHARTER=... to run another charter command)
set -euo pipefail
repository=${shellQuoted(repositoryRoot)}
receipt=${shellQuoted(receiptPath)}
before_commit=${shellQuoted(receipt.before_commit)}
expected_hash=${shellQuoted(receipt.after_hash ?? "")}
charter_command=\${CHARTER:-charter}
parent=$(mktemp -d "\${TMPDIR:-/tmp}/charter-replay-XXXXXX")
worktree="$parent/tree"
cleanup() {
  git -C "$repository" worktree remove --force "$worktree" >/dev/null 2>&1 || true
  rm -rf "$parent"
}
trap cleanup EXIT
git -C "$repository" worktree add --quiet --detach "$worktree" "$before_commit"
actual_hash=$($charter_command work replay "$receipt" --repo "$repository" --worktree "$worktree" --hash-only "$@") || actual_hash=""
if [ "$actual_hash" != "$expected_hash" ]; then
  echo "replay mismatch: expected $expected_hash, got \${actual_hash:-no state (the replay failed)}" >&2
  exit 1
fi
echo "replay verified: $actual_hash"
`;
  await writeFile(path, script);
  await chmod(path, 0o755);
  return path;
}
