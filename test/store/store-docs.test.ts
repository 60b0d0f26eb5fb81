import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

/** The examples of docs/store.md, extracted and run exactly as written ("charter" resolved to the sources). */
const documentation = await readFile(resolve(import.meta.dirname, "../../docs/store.md"), "utf8");
const examples = [...documentation.matchAll(/<!-- example: ([\w-]+) -->\n```ts\n([\s\S]*?)```/g)].map(
  (match) => ({ name: match[1]!, code: match[2]! }),
);
const entryPoint = resolve(import.meta.dirname, "store-docs-entry.ts");
const workDirectory = await mkdtemp(join(resolve(import.meta.dirname), ".examples-"));

afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

async function runExample(name: string, ...parameters: unknown[]): Promise<unknown> {
  const example = examples.find((candidate) => candidate.name === name);
  if (example === undefined) throw new Error(`docs/store.md has no example '${name}'`);
  const file = join(workDirectory, `${name}.ts`);
  await writeFile(file, example.code.replaceAll('from "charter"', `from ${JSON.stringify(entryPoint)}`));
  const module = (await import(file)) as { default: (...parameters: unknown[]) => Promise<unknown> };
  return module.default(...parameters);
}

describe("docs/store.md examples", () => {
  it("has the four examples", () => {
    expect(examples.map((example) => example.name)).toEqual([
      "open-store",
      "store-backed-transcript",
      "export-import",
      "tool-cache",
    ]);
  });

  it("open-store: an empty SQLite store, migrated", async () => {
    expect(await runExample("open-store")).toMatchObject({
      backend: "sqlite",
      schemaVersion: 10,
      runs: [],
      statistics: { runs: 0, entries: 0 },
    });
  });

  it("store-backed-transcript: a checkpoint per COMMIT, a finished run that verifies", async () => {
    const { verification, checkpoint, run, head } = (await runExample("store-backed-transcript")) as {
      verification: { ok: boolean; entries: number };
      checkpoint: { seq: number; turn: number; document: { v: number } };
      run: { status: string; entryCount: number; headHash: string; tenantId: string };
      head: string;
    };
    // INFER, COMMIT, the RECORD entry binding the COMMIT's checkpoint, TERMINATE.
    expect(verification).toMatchObject({ ok: true, entries: 4, head_hash: head });
    expect(checkpoint).toMatchObject({ seq: 1, turn: 1, document: { v: 1, step_index: 1 } });
    expect(run).toMatchObject({ status: "completed", entryCount: 4, headHash: head, tenantId: "acme" });
  });

  it("export-import: a fixture run round-trips", async () => {
    const fixture = JSON.parse(
      await readFile(resolve(import.meta.dirname, "../fixtures/store/v1/completed-with-tools.json"), "utf8"),
    ) as { run: { run_id: string }; entries: string[] };
    const { run, again } = (await runExample("export-import", fixture)) as {
      run: { runId: string; status: string };
      again: { entries: string[] };
    };
    expect(run).toMatchObject({ runId: fixture.run.run_id, status: "completed" });
    expect(again.entries).toEqual(fixture.entries);
  });

  it("tool-cache: a hit until the entry expires", async () => {
    expect(await runExample("tool-cache")).toMatchObject({ hit: { value: { hits: 3 } }, expired: null });
  });
});
