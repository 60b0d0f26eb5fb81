import { CharterError } from "../foundation/charter-error.js";
import type { CliStreams } from "./cli-streams.js";
import { defineCommand, type FlagValues } from "./command-declaration.js";
import { exitCodes } from "./exit-code.js";
import { openCliStore } from "./open-cli-store.js";
import { sharedFlags } from "./shared-flags.js";

const flags = {
  tenant: {
    type: "string",
    valueName: "ID",
    description:
      "The tenant the key acts in (required): its runs, its configuration, nothing of another tenant's.",
  },
  role: {
    type: "string",
    valueName: "ROLE",
    description:
      "keys create: admin (everything in the tenant, keys included), operator (start, cancel, approve runs) or viewer (read runs, events, statistics).",
  },
  user: {
    type: "string",
    valueName: "ID",
    description: "keys create: the user the key speaks for, recorded on the runs it starts.",
  },
  name: {
    type: "string",
    valueName: "TEXT",
    description: "keys create: a name to tell the key by in keys list.",
  },
  json: sharedFlags.json,
  store: sharedFlags.store,
  config: sharedFlags.config,
} as const;

const usage =
  "usage: charter keys create --tenant T --role R [--user U] [--name N] | list --tenant T | revoke <key-id> --tenant T";

/** `charter keys create|list|revoke`: the server's API keys, kept in the run store (hashes only). */
export const keysCommand = defineCommand({
  name: "keys",
  summary: "Make, list and revoke API keys for charter serve",
  description:
    "keys create makes an API key for one tenant and role and prints it once: only its hash is stored, so keep it then (it is sent as Authorization: Bearer <key>). keys list prints the tenant's keys (id, role, user, name, created, revoked), never the keys. keys revoke stops a key from authenticating at once.",
  positionals: [
    { name: "create|list|revoke", description: "What to do." },
    { name: "key-id", optional: true, description: "keys revoke: the key's id (from keys list)." },
  ],
  flags,
  examples: [
    "charter keys create --tenant acme --role operator --user ada --name 'ada laptop'",
    "charter keys list --tenant acme --json",
    "charter keys revoke 3f9a0c1d2e4b5a69 --tenant acme",
  ],
  run: keys,
});

async function keys(
  positionals: readonly string[],
  values: FlagValues<typeof flags>,
  streams: CliStreams,
): Promise<number> {
  const [subcommand, keyId, ...extra] = positionals;
  if (
    extra.length > 0 ||
    !(subcommand === "create" || subcommand === "list" || subcommand === "revoke") ||
    (subcommand === "revoke") !== (keyId !== undefined)
  ) {
    throw new CharterError("ARGUMENT_INVALID", usage, { details: { argument: "subcommand" } });
  }
  if (values.tenant === undefined || values.tenant === "") {
    throw new CharterError(
      "ARGUMENT_INVALID",
      `keys ${subcommand} needs --tenant: every key acts in one tenant`,
      {
        details: { argument: "tenant" },
      },
    );
  }
  const { apiKeyView, createApiKey } = await import("../server/identity/create-api-key.js");
  const store = await openCliStore(values, streams);
  try {
    if (subcommand === "create") {
      if (values.role === undefined) {
        throw new CharterError("ARGUMENT_INVALID", "keys create needs --role (admin, operator or viewer)", {
          details: { argument: "role" },
        });
      }
      const { key, record } = await createApiKey(store, {
        role: values.role,
        userId: values.user ?? null,
        name: values.name ?? null,
        now: Date.now(),
      });
      if (values.json) streams.stdout.write(`${JSON.stringify({ key, apiKey: apiKeyView(record) })}\n`);
      else {
        streams.stdout.write(`${key}\n`);
        streams.stderr.write(
          `API key ${record.keyId} for tenant ${record.tenantId}, role ${record.role}: shown once, only its hash is stored.\n`,
        );
      }
      return exitCodes.success;
    }
    if (subcommand === "list") {
      const listed = (await store.listApiKeys()).map(apiKeyView);
      if (values.json) streams.stdout.write(`${JSON.stringify(listed)}\n`);
      else {
        for (const key of listed) {
          streams.stdout.write(
            `${[key.keyId, key.role, key.userId ?? "-", key.name ?? "-", key.createdAt, key.revokedAt === null ? "active" : `revoked ${key.revokedAt}`].join("  ")}\n`,
          );
        }
      }
      return exitCodes.success;
    }
    const revoked = await store.revokeApiKey(keyId as string, Date.now());
    if (!revoked) {
      const stored = (await store.listApiKeys()).find((key) => key.keyId === keyId);
      if (stored === undefined) {
        throw new CharterError("API_KEY_NOT_FOUND", `tenant ${values.tenant} has no API key ${keyId}`, {
          details: { keyId, tenantId: values.tenant },
        });
      }
    }
    streams.stdout.write(
      values.json ? `${JSON.stringify({ keyId, revoked: true })}\n` : `revoked ${keyId}\n`,
    );
    return exitCodes.success;
  } finally {
    await store.close();
  }
}
