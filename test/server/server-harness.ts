import { randomBytes, randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import type { ServerConfiguration } from "../../src/config/server-configuration-schema.js";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { type CreateServerOptions, createServer } from "../../src/server/create-server.js";
import type { ServerRole } from "../../src/server/execution/run-request.js";
import { createApiKey } from "../../src/server/identity/create-api-key.js";
import { openRunStore } from "../../src/store/open-run-store.js";
import type { RunStore } from "../../src/store/run-store.js";
import { postgresTestUrl } from "../store/postgres-store-factory.js";

export type TestBackend = "sqlite" | "postgres";

/** The secrets key test servers seal tenants' provider keys with (as CHARTER_SECRETS_KEY would give one). */
export const testSecretsKey: Uint8Array = randomBytes(32);

/** The backends a server test runs on: SQLite always, PostgreSQL when CHARTER_TEST_DATABASE_URL names a server. */
export const testBackends: readonly TestBackend[] =
  postgresTestUrl === "" ? ["sqlite"] : ["sqlite", "postgres"];

export interface TestStore {
  readonly store: RunStore;
  /** The same store as a URL `runAgent` opens (for PostgreSQL, with the test's schema on its search path). */
  readonly url: string;
  dispose(): Promise<void>;
}

/** A fresh run store: a SQLite file in its own folder, or a PostgreSQL schema of its own (dropped after). */
export async function openTestStore(
  backend: TestBackend,
  environment = deterministicEnvironment(),
): Promise<TestStore> {
  if (backend === "sqlite") {
    const directory = await mkdtemp(join(tmpdir(), "charter-server-store-"));
    const path = join(directory, "charter.db");
    const store = await openRunStore({ path, environment });
    return {
      store,
      url: `sqlite:${path}`,
      async dispose() {
        await store.close();
        await rm(directory, { recursive: true, force: true });
      },
    };
  }
  const schema = `charter_test_${randomUUID().replaceAll("-", "").slice(0, 16)}`;
  const store = await openRunStore({ url: postgresTestUrl, postgres: { schema }, environment });
  const url = new URL(postgresTestUrl);
  url.searchParams.set("options", `-c search_path=${schema}`);
  return {
    store,
    url: url.toString(),
    async dispose() {
      await store.close();
      const client = new pg.Client({ connectionString: postgresTestUrl });
      await client.connect();
      try {
        await client.query(`drop schema if exists ${schema} cascade`);
      } finally {
        await client.end();
      }
    },
  };
}

export interface TestServer {
  readonly address: string;
  readonly store: RunStore;
  readonly storeUrl: string;
  readonly environment: ReturnType<typeof deterministicEnvironment>;
  /** Makes an API key for a tenant and role, as `charter keys create` does; returns the key. */
  key(tenantId: string, role: ServerRole, userId?: string): Promise<string>;
  /** `fetch` against the server with a key (or none) and a JSON body. */
  request(
    method: string,
    path: string,
    options?: {
      readonly key?: string | null;
      readonly body?: unknown;
      readonly headers?: Readonly<Record<string, string>>;
    },
  ): Promise<{
    readonly status: number;
    // biome-ignore lint/suspicious/noExplicitAny: a JSON answer, read field by field in the assertions
    readonly body: any;
    readonly headers: Headers;
  }>;
  close(): Promise<void>;
}

/** `createServer` over a fresh store, listening on loopback (port 0), with a deterministic clock and ids. */
export async function startTestServer(
  backend: TestBackend,
  options: {
    readonly configuration?: ServerConfiguration;
    readonly dispatcher?: (store: TestStore) => CreateServerOptions["dispatcher"];
    readonly violationLimits?: CreateServerOptions["violationLimits"];
    /** Default `testSecretsKey`; null for a server without one. */
    readonly secretsKey?: Uint8Array | null;
  } = {},
): Promise<TestServer> {
  const environment = deterministicEnvironment({ start: Date.UTC(2026, 0, 1) });
  const opened = await openTestStore(backend, environment);
  const dispatcher = options.dispatcher?.(opened);
  const server = await createServer({
    store: opened.store,
    environment,
    ...(options.configuration !== undefined ? { configuration: options.configuration } : {}),
    ...(dispatcher !== undefined ? { dispatcher } : {}),
    ...(options.violationLimits !== undefined ? { violationLimits: options.violationLimits } : {}),
    secretsKey: options.secretsKey === undefined ? testSecretsKey : options.secretsKey,
  });
  const address = await server.listen({ host: "127.0.0.1", port: 0 });
  return {
    address,
    store: opened.store,
    storeUrl: opened.url,
    environment,
    async key(tenantId, role, userId) {
      const made = await createApiKey(opened.store.forTenant(tenantId), {
        role,
        userId: userId ?? null,
        name: null,
        now: environment.now(),
      });
      return made.key;
    },
    async request(method, path, requestOptions = {}) {
      const headers: Record<string, string> = { ...requestOptions.headers };
      if (requestOptions.key != null) headers.authorization = `Bearer ${requestOptions.key}`;
      if (requestOptions.body !== undefined) headers["content-type"] = "application/json";
      const response = await fetch(`${address}${path}`, {
        method,
        headers,
        ...(requestOptions.body !== undefined ? { body: JSON.stringify(requestOptions.body) } : {}),
      });
      const text = await response.text();
      return {
        status: response.status,
        body: text === "" ? null : JSON.parse(text),
        headers: response.headers,
      };
    },
    async close() {
      await server.close();
      await opened.dispose();
    },
  };
}
