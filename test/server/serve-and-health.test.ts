import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { type CharterServer, createServer } from "../../src/server/create-server.js";
import { openRunStore } from "../../src/store/open-run-store.js";
import type { RunStore } from "../../src/store/run-store.js";
import { charterProcess } from "../cli/cli-harness.js";
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
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(["/healthz", "/readyz"]));
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

  it("refuses a port that is not a port number, exit 4", async () => {
    const run = await charterProcess(["serve", "--port", "99999"]);
    expect(run.exitCode).toBe(4);
    expect(run.stderr).toContain("--port must be a port number");
  });
});
