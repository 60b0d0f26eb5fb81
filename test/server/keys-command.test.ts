import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { createServer } from "../../src/server/create-server.js";
import { openRunStore } from "../../src/store/open-run-store.js";
import { charterProcess } from "../cli/cli-harness.js";

let directory = "";
afterEach(async () => {
  if (directory !== "") await rm(directory, { recursive: true, force: true });
  directory = "";
});

describe("charter keys", () => {
  it("create prints a key once and stores its hash; the server accepts it; list never shows it; revoke stops it", async () => {
    directory = await mkdtemp(join(tmpdir(), "charter-keys-"));
    const storeUrl = `sqlite:${join(directory, "charter.db")}`;
    const created = await charterProcess([
      "keys",
      "create",
      "--tenant",
      "acme",
      "--role",
      "admin",
      "--user",
      "ada",
      "--name",
      "ada laptop",
      "--store",
      storeUrl,
    ]);
    expect(created.exitCode, created.stderr).toBe(0);
    const key = created.stdout.trim();
    expect(key).toMatch(/^chk_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    const keyId = key.slice(4, 20);
    expect(created.stderr).toContain(`API key ${keyId} for tenant acme, role admin: shown once`);

    const listed = await charterProcess(["keys", "list", "--tenant", "acme", "--store", storeUrl, "--json"]);
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([
      {
        keyId,
        tenantId: "acme",
        userId: "ada",
        role: "admin",
        name: "ada laptop",
        createdAt: expect.any(String),
        revokedAt: null,
      },
    ]);
    expect(listed.stdout).not.toContain(key.slice(21));
    // Another tenant lists none of acme's keys and cannot revoke them.
    const other = await charterProcess(["keys", "list", "--tenant", "globex", "--store", storeUrl, "--json"]);
    expect(JSON.parse(other.stdout)).toEqual([]);
    const foreignRevoke = await charterProcess([
      "keys",
      "revoke",
      keyId,
      "--tenant",
      "globex",
      "--store",
      storeUrl,
    ]);
    expect(foreignRevoke.exitCode).toBe(4);
    expect(foreignRevoke.stderr).toContain(`tenant globex has no API key ${keyId}`);

    // The server on the same store knows the key, by its hash.
    const store = await openRunStore({ url: storeUrl, environment: deterministicEnvironment() });
    const server = await createServer({ store });
    try {
      const address = await server.listen({ host: "127.0.0.1", port: 0 });
      const authorised = await fetch(`${address}/v1/keys`, { headers: { authorization: `Bearer ${key}` } });
      expect(authorised.status).toBe(200);
      const revoked = await charterProcess([
        "keys",
        "revoke",
        keyId,
        "--tenant",
        "acme",
        "--store",
        storeUrl,
      ]);
      expect(revoked.exitCode, revoked.stderr).toBe(0);
      expect(revoked.stdout).toBe(`revoked ${keyId}\n`);
      const refused = await fetch(`${address}/v1/keys`, { headers: { authorization: `Bearer ${key}` } });
      expect(refused.status).toBe(401);
      expect(
        ((await refused.json()) as { error: { details: { reason: string } } }).error.details.reason,
      ).toBe("api_key_revoked");
    } finally {
      await server.close();
      await store.close();
    }
  });

  it("refuses a key without a tenant, or with a role that is not one, exit 4", async () => {
    directory = await mkdtemp(join(tmpdir(), "charter-keys-"));
    const storeUrl = `sqlite:${join(directory, "charter.db")}`;
    const noTenant = await charterProcess(["keys", "create", "--role", "admin", "--store", storeUrl]);
    expect(noTenant.exitCode).toBe(4);
    expect(noTenant.stderr).toContain("keys create needs --tenant");
    const badRole = await charterProcess([
      "keys",
      "create",
      "--tenant",
      "acme",
      "--role",
      "root",
      "--store",
      storeUrl,
    ]);
    expect(badRole.exitCode).toBe(4);
    expect(badRole.stderr).toContain("the role must be one of admin, operator, viewer, not 'root'");
  });
});
