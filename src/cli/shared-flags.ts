/**
 * Flags several commands accept with the same meaning, declared once so their help reads the same everywhere.
 * A command lists the ones it takes in its own `flags` (`config: sharedFlags.config`).
 */
export const sharedFlags = {
  config: {
    type: "string",
    valueName: "FILE",
    defaultText: "none; the .charter.json files found from the working directory still apply",
    description:
      "A configuration file, layered over the .charter.json files found from the working directory.",
  },
  store: {
    type: "string",
    valueName: "URL",
    defaultText: "the configuration's store, else CHARTER_DATABASE_URL, else ~/.charter/charter.db",
    description: "The run store: a SQLite file path or a postgres:// URL.",
  },
  json: {
    type: "boolean",
    default: false,
    description: "Print one JSON document on stdout instead of text.",
  },
  tenant: {
    type: "string",
    valueName: "ID",
    defaultText: "none: the runs stored without a tenant",
    description: "The tenant whose runs to read: another tenant's runs are not found.",
  },
  "runs-dir": {
    type: "string",
    valueName: "DIR",
    defaultText: "~/.charter/runs",
    description: "The directory of run transcripts (one subdirectory per run).",
  },
} as const;
