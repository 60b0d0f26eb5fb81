import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { chunkLines } from "../../src/tools/builtin/chunk-lines.js";
import {
  defaultToolOutputExtractionLimits,
  extractFromStoredOutput,
  type ToolOutputExtractionRequest,
  type ToolOutputExtractor,
} from "../../src/tools/builtin/tool-output-extraction.js";
import { createToolOutputTool } from "../../src/tools/builtin/tool-output-tool.js";
import { createDefaultPipeline } from "../../src/tools/create-default-pipeline.js";
import { createToolOutputStore } from "../../src/tools/tool-output-store.js";
import { ToolRegistry } from "../../src/tools/tool-registry.js";
import { callContext } from "./tool-call-fixture.js";

const scratch = mkdtempSync(join(tmpdir(), "charter-extraction-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const pipeline = createDefaultPipeline();

/** 500 inventory lines; every 50th holds a "shortage". */
const inventory = Array.from({ length: 500 }, (_, index) => {
  const line = index + 1;
  return line % 50 === 0
    ? `item ${String(line).padStart(3, "0")}: shortage of ${line} units`
    : `item ${String(line).padStart(3, "0")}: in stock`;
}).join("\n");

/**
 * A small in-process extractor standing in for the child run the runner wires in: a map step answers with the
 * chunk's lines that contain the question's last word, a reduce step joins the partial answers. Each step is
 * one accounting entry, as a child run's model call would be.
 */
function keywordExtractor() {
  const requests: ToolOutputExtractionRequest[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const extractor: ToolOutputExtractor = async (request) => {
    requests.push(request);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await Promise.resolve();
    inFlight--;
    const keyword = request.question.split(" ").at(-1) ?? "";
    const answer =
      request.phase === "map"
        ? request.chunks[0]!.split("\n")
            .filter((line) => line.includes(keyword))
            .join("; ") || "nothing"
        : request.chunks.filter((partial) => partial !== "nothing").join("; ");
    const step = request.phase === "map" ? `map ${request.chunk!.index}` : "reduce";
    return {
      answer,
      accounting: [{ type: "llm", provider: "test", model: "extractor", step, costUsd: 0.001 }],
    };
  };
  return { extractor, requests, maxInFlight: () => maxInFlight };
}

async function setup(
  runHash: string,
  extractor: ToolOutputExtractor | undefined,
  extractionLimits: Parameters<typeof createToolOutputTool>[0]["extractionLimits"] = {},
) {
  const store = createToolOutputStore({ runHash, baseDirectory: scratch });
  const tool = createToolOutputTool({
    store,
    ...(extractor === undefined ? {} : { extract: extractor }),
    extractionLimits,
    maxBytes: 4000,
  });
  const registry = new ToolRegistry([tool]);
  const { handle } = await store.store(inventory, { toolName: "inventory", callId: "c1" });
  const call = (args: Record<string, unknown>, signal?: AbortSignal) =>
    pipeline(callContext(registry, "tool_output", { handle, ...args }, signal ? { signal } : {}));
  return { store, registry, handle, call };
}

describe("tool_output extraction", () => {
  it("is offered only when an extractor is wired in", async () => {
    const without = await setup("offer-none", undefined);
    const schema = without.registry.get("tool_output")!.manifest.input_schema as {
      properties: Record<string, { enum?: string[] }>;
    };
    expect(schema.properties.mode!.enum).toEqual(["read", "grep"]);
    expect(schema.properties.question).toBeUndefined();
    expect(await without.call({ mode: "extract", question: "x" })).toMatchObject({
      status: "failed",
      error_code: "TOOL_INPUT_INVALID",
    });

    const { extractor } = keywordExtractor();
    const withExtractor = await setup("offer-some", extractor);
    const extended = withExtractor.registry.get("tool_output")!.manifest.input_schema as {
      properties: Record<string, { enum?: string[] }>;
    };
    expect(extended.properties.mode!.enum).toEqual(["read", "grep", "extract"]);
    expect(extended.properties.question).toMatchObject({ type: "string" });
  });

  it("maps the question over bounded chunks in order, reduces the answers, and carries every step's accounting", async () => {
    const { extractor, requests } = keywordExtractor();
    const { call, handle } = await setup("map-reduce", extractor, { chunkBytes: 2048, maxChunks: 16 });
    const result = await call({ mode: "extract", question: "which items have a shortage" });

    expect(result).toMatchObject({ status: "ok", executed: true });
    const maps = requests.filter((request) => request.phase === "map");
    const reduces = requests.filter((request) => request.phase === "reduce");
    expect(maps.length).toBeGreaterThan(1);
    expect(reduces).toHaveLength(1);
    // Each map step sees one chunk within the bound; together the chunks are the output, in order.
    let nextLine = 1;
    for (const [position, request] of maps.entries()) {
      expect(request.chunks).toHaveLength(1);
      expect(Buffer.byteLength(request.chunks[0]!)).toBeLessThanOrEqual(2048);
      expect(request.chunk).toMatchObject({ index: position + 1, count: maps.length, firstLine: nextLine });
      nextLine = request.chunk!.lastLine + 1;
      expect(request.handle).toBe(handle);
    }
    expect(maps.map((request) => request.chunks[0]).join("\n")).toBe(inventory);
    expect(nextLine).toBe(501);
    expect(reduces[0]!.chunks).toHaveLength(maps.length);
    expect(reduces[0]!.chunk).toBeNull();

    const shortages = Array.from({ length: 10 }, (_, index) => {
      const line = (index + 1) * 50;
      return `item ${String(line).padStart(3, "0")}: shortage of ${line} units`;
    });
    expect(result.content).toBe(`[${handle}: answer from lines 1-500 of 500]\n${shortages.join("; ")}`);
    expect(result.accounting).toEqual([
      ...maps.map((_, index) => expect.objectContaining({ step: `map ${index + 1}`, costUsd: 0.001 })),
      expect.objectContaining({ step: "reduce" }),
    ]);
    // Part of the frozen result (seed 003 INV-TOOL-002), entries included.
    expect(Object.isFrozen(result.accounting)).toBe(true);
    expect(Object.isFrozen(result.accounting![0])).toBe(true);
  });

  it("examines at most maxChunks chunks and says where to continue", async () => {
    const { extractor, requests } = keywordExtractor();
    const { call, handle } = await setup("bounded", extractor, { chunkBytes: 1024, maxChunks: 3 });
    const first = await call({ mode: "extract", question: "find shortage" });
    expect(requests.filter((request) => request.phase === "map")).toHaveLength(3);
    const covered = requests.filter((request) => request.phase === "map").at(-1)!.chunk!.lastLine;
    expect(first.content.split("\n")[0]).toBe(`[${handle}: answer from lines 1-${covered} of 500]`);
    expect(first.content).toContain(`start_line=${covered + 1} to continue`);
    expect(first.accounting).toHaveLength(4);

    requests.length = 0;
    const next = await call({ mode: "extract", question: "find shortage", start_line: covered + 1 });
    expect(requests[0]!.chunk!.firstLine).toBe(covered + 1);
    expect(next.content.split("\n")[0]).toContain(`answer from lines ${covered + 1}-`);
  });

  it("asks once, without a reduce step, when the output fits in one chunk", async () => {
    const { extractor, requests } = keywordExtractor();
    const { call, handle } = await setup("single", extractor, { chunkBytes: 64_000 });
    const result = await call({ mode: "extract", question: "item 250" });
    expect(requests.map((request) => request.phase)).toEqual(["map"]);
    expect(result.content).toBe(
      `[${handle}: answer from lines 1-500 of 500]\nitem 250: shortage of 250 units`,
    );
    expect(result.accounting).toHaveLength(1);
  });

  it("runs at most `concurrency` map steps at once", async () => {
    const tracked = keywordExtractor();
    const { call } = await setup("concurrency", tracked.extractor, { chunkBytes: 1024, concurrency: 2 });
    await call({ mode: "extract", question: "shortage" });
    expect(tracked.maxInFlight()).toBe(2);
  });

  it("fails as data when a step fails, keeping the accounting of the steps that ran", async () => {
    const { extractor: inner } = keywordExtractor();
    const failing: ToolOutputExtractor = async (request) => {
      if (request.chunk?.index === 2) throw new Error("child run failed: budget exhausted");
      return inner(request);
    };
    const { call } = await setup("failure", failing, { chunkBytes: 1024, concurrency: 1 });
    const result = await call({ mode: "extract", question: "shortage" });
    expect(result).toMatchObject({
      status: "failed",
      error_code: "TOOL_EXECUTION_FAILED",
      content: "(tool failed: extraction failed: child run failed: budget exhausted)",
    });
    expect(result.accounting).toEqual([expect.objectContaining({ step: "map 1" })]);
  });

  it("starts no further step once the call is interrupted", async () => {
    const store = createToolOutputStore({ runHash: "interrupt", baseDirectory: scratch });
    const { handle } = await store.store(inventory, { toolName: "inventory", callId: "c1" });
    const interrupt = new AbortController();
    const seen: number[] = [];
    const result = await extractFromStoredOutput({
      store,
      handle,
      question: "shortage",
      startLine: 1,
      limits: { ...defaultToolOutputExtractionLimits, chunkBytes: 1024, concurrency: 1 },
      signal: interrupt.signal,
      extractor: async (request) => {
        seen.push(request.chunk?.index ?? 0);
        interrupt.abort();
        return { answer: "partial", accounting: [{ step: "map" }] };
      },
    });
    expect(seen).toEqual([1]);
    expect(result).toMatchObject({ ok: false, accounting: [{ step: "map" }] });
  });

  it("needs a question, and answers plainly past the last line, without asking", async () => {
    const { extractor, requests } = keywordExtractor();
    const { call, handle } = await setup("inputs", extractor);
    expect(await call({ mode: "extract" })).toMatchObject({
      status: "failed",
      error_code: "TOOL_INPUT_INVALID",
    });
    expect(await call({ mode: "extract", question: "  " })).toMatchObject({
      error_code: "TOOL_INPUT_INVALID",
    });
    const past = await call({ mode: "extract", question: "x", start_line: 900 });
    expect(past.content).toBe(`[${handle}: no lines from 900; the output has 500 lines]`);
    expect(requests).toEqual([]);
  });

  it("refuses limits that are not positive integers", async () => {
    const store = createToolOutputStore({ runHash: "limits", baseDirectory: scratch });
    const { extractor } = keywordExtractor();
    expect(() =>
      createToolOutputTool({ store, extract: extractor, extractionLimits: { maxChunks: 0 } }),
    ).toThrow(expect.objectContaining({ code: "CONFIGURATION_INVALID" }));
  });
});

describe("chunkLines", () => {
  it("keeps lines whole within the byte bound and numbers what each chunk covers", () => {
    const lines = ["aaaa", "bbbb", "cccc", "dddd", "eeee"];
    const { chunks, coveredThrough } = chunkLines(lines, 10, { chunkBytes: 9, maxChunks: 10 });
    expect(chunks).toEqual([
      { text: "aaaa\nbbbb", firstLine: 10, lastLine: 11 },
      { text: "cccc\ndddd", firstLine: 12, lastLine: 13 },
      { text: "eeee", firstLine: 14, lastLine: 14 },
    ]);
    expect(coveredThrough).toBe(14);
  });

  it("splits a line longer than a chunk without breaking a character, and stops at maxChunks", () => {
    const long = "é".repeat(10); // 20 bytes
    const { chunks } = chunkLines(["x", long, "y"], 1, { chunkBytes: 7, maxChunks: 10 });
    expect(chunks.map((chunk) => chunk.text)).toEqual(["x", "ééé", "ééé", "ééé", "é", "y"]);
    expect(chunks.slice(1, 5).every((chunk) => chunk.firstLine === 2 && chunk.lastLine === 2)).toBe(true);

    const bounded = chunkLines(["x", long, "y"], 1, { chunkBytes: 7, maxChunks: 3 });
    expect(bounded.chunks.map((chunk) => chunk.text)).toEqual(["x"]);
    expect(bounded.coveredThrough).toBe(1);
    const tight = chunkLines(["ab", "cd", "ef"], 1, { chunkBytes: 2, maxChunks: 2 });
    expect(tight).toEqual({
      chunks: [
        { text: "ab", firstLine: 1, lastLine: 1 },
        { text: "cd", firstLine: 2, lastLine: 2 },
      ],
      coveredThrough: 2,
    });
  });
});
