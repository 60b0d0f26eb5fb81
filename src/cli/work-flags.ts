import { sharedFlags } from "./shared-flags.js";

/** The flags of `charter work` (each subcommand reads the ones it uses). */
export const workFlags = {
  repo: {
    type: "string",
    valueName: "DIR",
    defaultText: "the git working tree around the current directory",
    description: "The git repository (working tree) the work item runs in.",
  },
  "max-parallel": {
    type: "string",
    valueName: "N",
    defaultText: "2",
    description: "work plan: items of one level that run at once, each in its own git worktree.",
  },
  commit: {
    type: "boolean",
    default: false,
    description: "work run: record an admitted change as one commit on the current branch.",
  },
  worktree: {
    type: "string",
    valueName: "DIR",
    defaultText: "a temporary worktree at the before snapshot",
    description: "work replay: replay into this worktree, which must be at the item's before state.",
  },
  "hash-only": {
    type: "boolean",
    default: false,
    description:
      "work replay: print only the replayed state's hash (exit 1 when the replay itself diverged).",
  },
  json: { ...sharedFlags.json, description: "Print the result (or the verification) as one JSON document." },
  config: sharedFlags.config,
  store: sharedFlags.store,
  tenant: {
    type: "string",
    valueName: "ID",
    description: "Who the work item is for: its run and its receipt are stored for this tenant.",
  },
  "runs-dir": sharedFlags["runs-dir"],
} as const;
