import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { contentHash } from "../../src/foundation/content-hash.js";
import { SecretRedactor } from "../../src/foundation/secret-redactor.js";
import { createJsonlTranscriptWriter } from "../../src/transcript/jsonl-transcript-writer.js";
import { readRunDirectory } from "../../src/transcript/read-transcript.js";
import { verifyRunDirectory } from "../../src/transcript/verify-transcript.js";
import { entryInput, startTranscript, temporaryDirectory } from "./transcript-fixtures.js";

let directory: { path: string; remove: () => Promise<void> };
beforeEach(async () => {
  directory = await temporaryDirectory();
});
afterEach(async () => {
  await directory.remove();
});

async function allFiles(root: string): Promise<string[]> {
  const found: string[] = [];
  for (const item of await readdir(root, { withFileTypes: true })) {
    const path = join(root, item.name);
    if (item.isDirectory()) found.push(...(await allFiles(path)));
    else found.push(path);
  }
  return found;
}

const apiKey = "sk-proj-4f9c2d7e1b";
const databasePassword = 'p@ss"word\\with/odd chars';
const bearerToken = "opaque-bearer-token-77";

describe("secrets in a run directory", () => {
  it("never reach any file, in any encoding, nor any hash preimage", async () => {
    const redactor = new SecretRedactor();
    redactor.addSecret(apiKey, "OPENAI_API_KEY");
    redactor.addSecret(databasePassword, "DATABASE_PASSWORD");
    const runDirectory = join(directory.path, "run");
    const { transcript } = startTranscript({ writer: createJsonlTranscriptWriter(runDirectory), redactor });

    const rawRequest = {
      url: `https://api.example.test/v1/chat?key=${encodeURIComponent(databasePassword)}`,
      headers: { Authorization: `Bearer ${bearerToken}`, "x-api-key": apiKey },
      body: { messages: [{ role: "user", content: `connect with ${databasePassword}` }] },
    };
    const rawResponse = { choices: [{ message: { content: `I will use ${apiKey}` } }] };
    const requestHash = transcript.storeRaw(rawRequest);
    const responseHash = transcript.storeRaw(rawResponse);
    const action = {
      raw_request_hash: requestHash,
      tool_arguments: JSON.stringify({ password: databasePassword }),
      headers: { authorization: `Bearer ${bearerToken}` },
    };
    const result = {
      raw_response_hash: responseHash,
      text: `key is ${apiKey}`,
      nested: [[{ value: apiKey }]],
    };
    transcript.append(
      entryInput(0, {
        state: "INFER",
        step_id: `infer with ${apiKey}`,
        action,
        result,
        model_fingerprint: `local/${apiKey}`,
      }),
    );
    transcript.append(entryInput(1, { result: { error: new Error(`failed: ${databasePassword}`).message } }));
    await transcript.close();

    const forbidden = [apiKey, databasePassword, bearerToken].flatMap((secret) => [
      secret,
      JSON.stringify(secret).slice(1, -1),
      encodeURIComponent(secret),
    ]);
    const files = await allFiles(runDirectory);
    expect(files.length).toBeGreaterThanOrEqual(5);
    for (const file of files) {
      const bytes = await readFile(file);
      for (const secret of forbidden) {
        expect(bytes.includes(Buffer.from(secret)), `${secret} in ${file}`).toBe(false);
      }
    }

    // The hashes were computed over exactly what is stored (the redacted values), not the originals.
    const run = await readRunDirectory(runDirectory);
    const [first] = run.entries;
    expect(first!.action_hash).toBe(contentHash(first!.action));
    expect(first!.action_hash).not.toBe(contentHash(action));
    expect(first!.result_hash).not.toBe(contentHash(result));
    expect(requestHash).not.toBe(contentHash(rawRequest));
    expect((await verifyRunDirectory(runDirectory)).ok).toBe(true);
  });
});
