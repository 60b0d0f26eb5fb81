import { readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import { reassembleRawRequest } from "../../src/transcript/raw-request-parts.js";
import { agentFile, charterProcess, project, providerConfig } from "../cli/cli-harness.js";

// A provider request carries the whole conversation every turn. It is stored by parts: each message (and tool
// definition) once per run, the request as a composite naming them, so a long run neither re-hashes nor re-writes
// its history on every turn, and the record still holds exactly what was sent.

let server: ScriptedOpenAIServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const systemMarker = "You are the raw-request-parts test agent, marker 7c1f.";

async function recordedRun() {
  const turns = 4;
  server = await startScriptedOpenAIServer({
    script: [
      ...Array.from({ length: turns - 1 }, (_, index) => ({
        kind: "tool_calls" as const,
        calls: [{ name: "test__add", arguments: { a: index, b: 1 } }],
      })),
      {
        kind: "tool_calls" as const,
        calls: [{ name: "final_report", arguments: { format: "markdown", content: "sums done" } }],
      },
    ],
  });
  const files = await project({
    agent: agentFile("models: [local/test-model]\ntools: [test]\ntoolPolicy: required", systemMarker),
    config: providerConfig(server.baseUrl),
    env: "LOCAL_API_KEY=sk-raw-parts-0123456789abcdef\n",
  });
  const run = await charterProcess(
    [
      "run",
      files.agentPath,
      "Add some numbers.",
      "--config",
      files.configPath,
      "--json",
      "--runs-dir",
      files.runsDirectory,
    ],
    { cwd: files.directory },
  );
  expect(run.exitCode, run.stderr).toBe(0);
  const [runName] = await readdir(files.runsDirectory);
  const runDirectory = join(files.runsDirectory, runName as string);
  const rawDirectory = join(runDirectory, "raw");
  const raw = new Map<string, string>();
  for (const name of await readdir(rawDirectory)) {
    raw.set(name.slice(0, -".json".length), await readFile(join(rawDirectory, name), "utf8"));
  }
  const lines = (await readFile(join(runDirectory, "transcript.jsonl"), "utf8")).trim().split("\n");
  const requestHashes = lines
    .map((line) => JSON.parse(line) as { state: string; action: { raw_request_hash?: string | null } })
    .filter((entry) => entry.state === "INFER")
    .map((entry) => entry.action.raw_request_hash);
  return { files, runDirectory, rawDirectory, raw, requestHashes, turns };
}

describe("provider requests stored by parts", () => {
  it("each INFER's raw request reassembles to exactly the body the provider received, and every message is stored once", async () => {
    const { raw, requestHashes, turns } = await recordedRun();
    const received = server!.requests.filter((request) => request.completionIndex !== null);
    expect(received).toHaveLength(turns);
    expect(requestHashes).toHaveLength(turns);
    const readPart = (hash: string) => {
      const text = raw.get(hash);
      return text === undefined ? undefined : JSON.parse(text);
    };
    requestHashes.forEach((hash, index) => {
      expect(typeof hash).toBe("string");
      const composite = JSON.parse(raw.get(hash as string) as string);
      expect(composite.format).toBe("charter.raw-request");
      expect(reassembleRawRequest(composite, readPart)).toEqual(received[index]!.body);
    });
    // The system prompt went out in every request, but is stored once.
    const holdingMarker = [...raw.values()].filter((text) => text.includes("marker 7c1f"));
    expect(holdingMarker).toHaveLength(1);
  });

  it("charter verify fails, naming the request, when a part a request names is removed", async () => {
    const { files, rawDirectory, raw, requestHashes } = await recordedRun();
    const verified = await charterProcess([
      "verify",
      join(files.runsDirectory, (await readdir(files.runsDirectory))[0]!),
      "--json",
    ]);
    expect(verified.exitCode, verified.stdout + verified.stderr).toBe(0);
    const lastRequest = JSON.parse(raw.get(requestHashes.at(-1) as string) as string);
    const systemPart = lastRequest.parts.messages[0] as string;
    await rm(join(rawDirectory, `${systemPart}.json`));
    const tampered = await charterProcess([
      "verify",
      join(files.runsDirectory, (await readdir(files.runsDirectory))[0]!),
      "--json",
    ]);
    expect(tampered.exitCode).not.toBe(0);
    const report = JSON.parse(tampered.stdout);
    expect(report.ok).toBe(false);
    // The first request that named the removed part is the first INFER: the run verifies up to it.
    expect(JSON.stringify(report)).toContain("RAW_PAYLOAD_HASH_MISMATCH");
    expect(JSON.stringify(report)).toContain(requestHashes[0]);
  });
});
