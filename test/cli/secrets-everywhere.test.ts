import { mkdir, mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { AIAgentResult } from "../../src/session/agent-result.js";
import { type RestTestServer, startRestTestServer } from "../../src/testing/rest-test-server.js";
import {
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import type { ScriptedStep } from "../../src/testing/scripted-openai-step.js";
import { charterProcess } from "./cli-harness.js";

// One secret from .charter.env (the provider key), one from the process environment through ${REST_TOKEN}.
const fileSecret = "sk-envfile-7d1c9e5a3b2f4068";
const environmentSecret = "tok-process-91e2a7c4d5b6";
const secrets = [fileSecret, environmentSecret];

/** Every spelling a secret could be written in: as it is, JSON-escaped, URL-encoded. */
const forbidden = secrets.flatMap((secret) => [
  secret,
  JSON.stringify(secret).slice(1, -1),
  encodeURIComponent(secret),
]);

let model: ScriptedOpenAIServer | null = null;
let rest: RestTestServer;

beforeAll(async () => {
  // The REST API hands the secrets back: in a small answer, and in one too large to show (stored behind a handle).
  rest = await startRestTestServer((request) =>
    request.path === "/dump"
      ? {
          headers: { "content-type": "text/plain" },
          body: Array.from(
            { length: 400 },
            (_, index) => `row ${index} ${fileSecret} ${environmentSecret}`,
          ).join("\n"),
        }
      : { body: { echoedToken: request.headers["x-token"], key: fileSecret } },
  );
  return () => rest.close();
});

afterEach(async () => {
  await model?.close();
  model = null;
});

async function filesUnder(root: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) found.push(join(entry.parentPath, entry.name));
  }
  return found;
}

function expectNoSecret(text: string | Buffer, where: string): void {
  const bytes = typeof text === "string" ? Buffer.from(text) : text;
  for (const secret of forbidden)
    expect(bytes.includes(Buffer.from(secret)), `${secret} in ${where}`).toBe(false);
}

/** A project whose home, runs, store and temporary folder are all its own, so that everything written is found. */
async function workspace() {
  const directory = await mkdtemp(join(tmpdir(), "charter-secrets-"));
  const home = join(directory, "home");
  const temporary = join(directory, "tmp");
  await mkdir(home);
  await mkdir(temporary);
  await writeFile(
    join(directory, "agent.md"),
    "---\nmodels: [local/m]\ntools: [rest__lookup, rest__dump]\nmaxRetries: 3\n---\nYou look things up.\n",
  );
  await writeFile(join(directory, ".charter.env"), `LOCAL_API_KEY=${fileSecret}\n`);
  return { directory, home, temporary };
}

async function configure(directory: string, baseUrl: string): Promise<void> {
  await writeFile(
    join(directory, ".charter.json"),
    JSON.stringify({
      providers: {
        local: {
          type: "openai-compatible",
          baseUrl,
          // biome-ignore lint/suspicious/noTemplateCurlyInString: a configuration placeholder Charter expands.
          apiKey: "${LOCAL_API_KEY}",
          models: { m: { contextWindow: 32000 } },
        },
      },
      defaults: { toolResponseMaxBytes: 2048 },
      restTools: {
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a configuration placeholder Charter expands.
        lookup: { method: "GET", url: `${rest.url}/lookup`, headers: { "X-Token": "${REST_TOKEN}" } },
        dump: { method: "GET", url: `${rest.url}/dump` },
      },
    }),
  );
}

/** A provider error whose body quotes the key, then calls whose results carry the secrets, then an answer echoing them. */
function script(): ScriptedStep[] {
  return [
    {
      kind: "error",
      status: 400,
      body: { error: { message: `invalid request for key ${fileSecret}`, type: "invalid_request_error" } },
    },
    {
      kind: "tool_calls",
      calls: [
        { id: "call_lookup", name: "rest__lookup", arguments: {} },
        { id: "call_dump", name: "rest__dump", arguments: {} },
      ],
    },
    {
      kind: "text",
      text: `Found it: the key is ${fileSecret} and the token ${environmentSecret}.`,
      reasoning: `I saw ${fileSecret}`,
    },
  ];
}

describe("secrets never reach a file Charter writes nor anything it prints", () => {
  it("with a model, a tool and a provider error returning them, in --json, --stream and human mode", async () => {
    const { directory, home, temporary } = await workspace();
    const env = {
      HOME: home,
      TMPDIR: temporary,
      REST_TOKEN: environmentSecret,
      CHARTER_DATABASE_URL: undefined,
    };
    const printed: string[] = [];
    const runIds: string[] = [];
    for (const mode of [["--json"], ["--stream"], []]) {
      model = await startScriptedOpenAIServer({ script: script() });
      await configure(directory, model.baseUrl);
      const run = await charterProcess(["run", "agent.md", "Look it up.", ...mode], { cwd: directory, env });
      printed.push(run.stdout, run.stderr);
      expect(run.exitCode, run.stderr).toBe(0);
      // The secrets did reach where they belong: the provider, and the REST API.
      expect(model.requests[0]!.headers.authorization).toBe(`Bearer ${fileSecret}`);
      if (mode[0] === "--json") {
        const result = JSON.parse(run.stdout) as AIAgentResult;
        runIds.push(result.runId);
        expect(JSON.stringify(result.finalReport)).toContain("[REDACTED:");
      } else {
        // What the model said is shown, with the secrets redacted (streamed in pieces with --stream).
        expect(run.stdout).toContain("Found it: the key is [REDACTED:");
      }
      await model.close();
      model = null;
    }
    expect(rest.requests.some((request) => request.headers["x-token"] === environmentSecret)).toBe(true);

    const runId = runIds[0]!;
    for (const command of [
      ["runs", "show", runId, "--json"],
      ["runs", "list", "--json"],
      ["runs", "show", runId],
    ]) {
      const shown = await charterProcess(command, { cwd: directory, env });
      expect(shown.exitCode, shown.stderr).toBe(0);
      printed.push(shown.stdout, shown.stderr);
    }
    // The record still verifies and replays: what is hashed is what is stored, the redacted form.
    const verified = await charterProcess(["verify", runId, "--json"], { cwd: directory, env });
    expect(verified.exitCode, verified.stdout + verified.stderr).toBe(0);
    const replayed = await charterProcess(["replay", runId, "--json"], { cwd: directory, env });
    expect(replayed.exitCode, replayed.stdout + replayed.stderr).toBe(0);
    printed.push(verified.stdout, verified.stderr, replayed.stdout, replayed.stderr);

    for (const [index, text] of printed.entries()) expectNoSecret(text, `output ${index}`);
    const written = await filesUnder(home);
    // The run directories and the store (its WAL included, when there is one) were written.
    expect(written.some((file) => file.endsWith("transcript.jsonl"))).toBe(true);
    expect(written.some((file) => file.endsWith("charter.db"))).toBe(true);
    for (const file of [...written, ...(await filesUnder(temporary))])
      expectNoSecret(await readFile(file), file);
    // Oversized outputs were stored under the temporary folder during each run, and removed when it ended.
    expect(await filesUnder(temporary)).toEqual([]);
  }, 240_000);

  it("prints no secret from a provider error that ends the run, in --json or human mode", async () => {
    const { directory, home, temporary } = await workspace();
    const env = {
      HOME: home,
      TMPDIR: temporary,
      REST_TOKEN: environmentSecret,
      CHARTER_DATABASE_URL: undefined,
    };
    const printed: string[] = [];
    for (const mode of [["--json"], []]) {
      model = await startScriptedOpenAIServer({
        script: [
          {
            kind: "error",
            status: 401,
            body: {
              error: { message: `Incorrect API key provided: ${fileSecret}`, type: "invalid_request_error" },
            },
          },
        ],
      });
      await configure(directory, model.baseUrl);
      const run = await charterProcess(["run", "agent.md", "Look it up.", ...mode], { cwd: directory, env });
      expect(run.exitCode).toBe(1);
      expect(run.stdout + run.stderr).toContain("MODEL_AUTHENTICATION_FAILED");
      printed.push(run.stdout, run.stderr);
      await model.close();
      model = null;
    }
    for (const [index, text] of printed.entries()) expectNoSecret(text, `output ${index}`);
    for (const file of [...(await filesUnder(home)), ...(await filesUnder(temporary))]) {
      expectNoSecret(await readFile(file), file);
    }
  }, 120_000);
});
