import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { type CharterServer, createServer } from "../../src/server/create-server.js";
import { openRunStore } from "../../src/store/open-run-store.js";
import type { RunStore } from "../../src/store/run-store.js";
import { startScriptedOpenAIServer } from "../../src/testing/scripted-openai-server.js";
import { charterProcess, localModelProvider } from "../cli/cli-harness.js";
import { postgresTestStore, postgresTestUrl } from "./execution-harness.js";
import { startServeProcess } from "./serve-process.js";

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

async function temporaryDirectory(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), "charter-serve-"));
  cleanups.push(() => rm(directory, { recursive: true, force: true }));
  return directory;
}

async function serverOnLoopback(): Promise<{ server: CharterServer; store: RunStore; address: string }> {
  const store = await openRunStore({
    path: join(await temporaryDirectory(), "charter.db"),
    environment: deterministicEnvironment(),
  });
  const server = await createServer({ store, environment: deterministicEnvironment() });
  const address = await server.listen({ host: "127.0.0.1", port: 0 });
  cleanups.push(async () => {
    await server.close();
    await store.close();
  });
  return { server, store, address };
}

describe("the server's own routes", () => {
  it("GET /healthz answers ok, GET /readyz says whether the run store can be reached", async () => {
    const { store, address } = await serverOnLoopback();
    const health = await fetch(`${address}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });
    const ready = await fetch(`${address}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: "ready", store: { backend: "sqlite", reachable: true } });
    // A store that can no longer be reached: not ready, while still healthy.
    await store.close();
    const notReady = await fetch(`${address}/readyz`);
    expect(notReady.status).toBe(503);
    expect(await notReady.json()).toEqual({
      status: "not_ready",
      store: { backend: "sqlite", reachable: false },
    });
    expect((await fetch(`${address}/healthz`)).status).toBe(200);
  });

  it("answers a path no route serves with the one error shape", async () => {
    const { address } = await serverOnLoopback();
    const response = await fetch(`${address}/v1/nothing-here?x=1`);
    expect(response.status).toBe(404);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({
      error: {
        code: "ROUTE_NOT_FOUND",
        class: "validation_error",
        message: "no route GET /v1/nothing-here",
        details: { method: "GET" },
      },
    });
  });

  it("serves its OpenAPI document at /openapi.json, built from the routes' schemas", async () => {
    const { address } = await serverOnLoopback();
    const response = await fetch(`${address}/openapi.json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as {
      openapi: string;
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
      components: { schemas: Record<string, unknown> };
    };
    expect(document.openapi).toBe("3.1.0");
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        "/healthz",
        "/readyz",
        "/v1/runs",
        "/v1/runs/{id}",
        "/v1/runs/{id}/transcript",
        "/v1/runs/{id}/cancel",
        "/v1/runs/{id}/approvals",
        "/v1/keys",
        "/v1/keys/{keyId}",
        "/v1/tenant/config",
      ]),
    );
    expect(Object.keys(document.paths["/v1/runs"]?.post?.responses ?? {})).toEqual(
      expect.arrayContaining(["200", "202", "400", "401", "403", "404", "422", "429", "500"]),
    );
    expect(document.components.schemas.Run).toMatchObject({ type: "object" });
    expect(Object.keys(document.paths["/readyz"]?.get?.responses ?? {})).toEqual(["200", "503"]);
    expect(document.components.schemas.Error).toMatchObject({ required: ["error"] });
    // The document itself is not one of its paths.
    expect(document.paths["/openapi.json"]).toBeUndefined();
  });
});

describe("charter serve", () => {
  it("prints the address it listens on, serves there, and stops with exit 0 on SIGTERM", async () => {
    const directory = await temporaryDirectory();
    const served = await startServeProcess(
      ["--port", "0", "--store", `sqlite:${join(directory, "serve.db")}`],
      {
        cwd: directory,
      },
    );
    expect(served.address).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const ready = await fetch(`${served.address}/readyz`);
    expect(await ready.json()).toMatchObject({ status: "ready" });
    expect(await served.stop("SIGTERM")).toBe(0);
    expect(served.output().stdout).toContain("charter serve: stopped");
  });

  it("serves runs: a key from charter keys starts a run of a registry agent on the scripted model, wait: true", async () => {
    const directory = await temporaryDirectory();
    const model = await startScriptedOpenAIServer({ respond: () => ({ kind: "text", text: "served" }) });
    cleanups.push(() => model.close());
    await writeFile(
      join(directory, ".charter.json"),
      JSON.stringify({ providers: localModelProvider(model.baseUrl) }),
    );
    const { mkdir } = await import("node:fs/promises");
    await mkdir(join(directory, "agents"));
    await writeFile(
      join(directory, "agents", "helper.md"),
      "---\nmodels: [local/m]\ntoolPolicy: optional\nmaxTurns: 2\n---\nYou answer briefly.\n",
    );
    const store = `sqlite:${join(directory, "serve.db")}`;
    const env = { HOME: directory };
    const created = await charterProcess(
      ["keys", "create", "--tenant", "acme", "--role", "operator", "--store", store],
      {
        cwd: directory,
        env,
      },
    );
    expect(created.exitCode, created.stderr).toBe(0);
    const key = created.stdout.trim();
    const served = await startServeProcess(["--port", "0", "--store", store, "--workers", "1"], {
      cwd: directory,
      env,
    });
    cleanups.push(async () => {
      if (served.child.exitCode === null) await served.stop("SIGTERM");
    });
    const response = await fetch(`${served.address}/v1/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ agent: "helper", prompt: "Say served.", wait: true }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      agent: "helper",
      status: "completed",
      lifecycle: "COMPLETED",
      finalReport: expect.objectContaining({ content: "served" }),
    });
    expect(await served.stop("SIGTERM")).toBe(0);
  });

  it.skipIf(postgresTestUrl === "")(
    "with a PostgreSQL store, serves runs through the queue: its own worker takes them (--workers 1)",
    async () => {
      const directory = await temporaryDirectory();
      const model = await startScriptedOpenAIServer({
        respond: () => ({ kind: "text", text: "queued and served" }),
      });
      cleanups.push(() => model.close());
      await writeFile(
        join(directory, ".charter.json"),
        JSON.stringify({ providers: localModelProvider(model.baseUrl) }),
      );
      const { mkdir } = await import("node:fs/promises");
      await mkdir(join(directory, "agents"));
      await writeFile(
        join(directory, "agents", "helper.md"),
        "---\nmodels: [local/m]\ntoolPolicy: optional\nmaxTurns: 2\n---\nYou answer briefly.\n",
      );
      const opened = await postgresTestStore();
      cleanups.push(() => opened.dispose());
      const env = { HOME: directory };
      const created = await charterProcess(
        ["keys", "create", "--tenant", "acme", "--role", "operator", "--store", opened.url],
        {
          cwd: directory,
          env,
        },
      );
      expect(created.exitCode, created.stderr).toBe(0);
      const served = await startServeProcess(["--port", "0", "--store", opened.url, "--workers", "1"], {
        cwd: directory,
        env,
      });
      cleanups.push(async () => {
        if (served.child.exitCode === null) await served.stop("SIGTERM");
      });
      const response = await fetch(`${served.address}/v1/runs`, {
        method: "POST",
        headers: { authorization: `Bearer ${created.stdout.trim()}`, "content-type": "application/json" },
        body: JSON.stringify({ agent: "helper", prompt: "Say it.", wait: true }),
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ status: "completed", lifecycle: "COMPLETED" });
      expect(await served.stop("SIGTERM")).toBe(0);
    },
  );

  // The length of a listening socket's queue is what `ss` shows as its Send-Q (Linux, iproute2).
  const ss = ["/usr/bin/ss", "/bin/ss", "/usr/sbin/ss", "/sbin/ss"].find((path) => existsSync(path));
  async function listenBacklogOf(address: string): Promise<number> {
    const port = new URL(address).port;
    const { stdout } = await promisify(execFile)(ss as string, ["-ltnH", `sport = :${port}`]);
    const columns = stdout.trim().split(/\s+/);
    expect(columns[0]).toBe("LISTEN");
    return Number(columns[2]);
  }

  it.skipIf(ss === undefined)(
    "listens with the queue length of --backlog, else of server.listenBacklog, else Node's 511",
    async () => {
      const directory = await temporaryDirectory();
      const store = `sqlite:${join(directory, "serve.db")}`;
      const fromFlag = await startServeProcess(["--port", "0", "--store", store, "--backlog", "2000"], {
        cwd: directory,
      });
      expect(await listenBacklogOf(fromFlag.address)).toBe(2000);
      expect(await fromFlag.stop("SIGTERM")).toBe(0);
      const unset = await startServeProcess(["--port", "0", "--store", store], { cwd: directory });
      expect(await listenBacklogOf(unset.address)).toBe(511);
      expect(await unset.stop("SIGTERM")).toBe(0);
      await writeFile(join(directory, ".charter.json"), JSON.stringify({ server: { listenBacklog: 1500 } }));
      const fromConfiguration = await startServeProcess(["--port", "0", "--store", store], {
        cwd: directory,
      });
      expect(await listenBacklogOf(fromConfiguration.address)).toBe(1500);
      expect(await fromConfiguration.stop("SIGTERM")).toBe(0);
    },
  );

  it("refuses --workers 0, a port that is not a port number and a backlog that is not a count, exit 4", async () => {
    const backlog = await charterProcess(["serve", "--backlog", "0"]);
    expect(backlog.exitCode).toBe(4);
    expect(backlog.stderr).toContain("--backlog must be a whole number of connections (1 or more), not '0'");
    const workers = await charterProcess(["serve", "--workers", "0"]);
    expect(workers.exitCode).toBe(4);
    expect(workers.stderr).toContain("--workers 0 serves the API alone, which needs a PostgreSQL store");
    const run = await charterProcess(["serve", "--port", "99999"]);
    expect(run.exitCode).toBe(4);
    expect(run.stderr).toContain("--port must be a port number");
  });
});
