import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

/** The examples of docs/library.md, extracted and run exactly as written ("charter" resolved to the sources). */
const documentation = await readFile(resolve(import.meta.dirname, "../../docs/library.md"), "utf8");
const examples = [...documentation.matchAll(/<!-- example: ([\w-]+) -->\n```ts\n([\s\S]*?)```/g)].map(
  (match) => ({
    name: match[1]!,
    code: match[2]!,
  }),
);
const entryPoint = resolve(import.meta.dirname, "../../src/index.ts");
const workDirectory = await mkdtemp(join(resolve(import.meta.dirname), ".examples-"));

afterAll(async () => {
  await rm(workDirectory, { recursive: true, force: true });
});

async function runExample(name: string): Promise<unknown> {
  const example = examples.find((candidate) => candidate.name === name);
  if (example === undefined) throw new Error(`docs/library.md has no example '${name}'`);
  const file = join(workDirectory, `${name}.ts`);
  await writeFile(file, example.code.replaceAll('from "charter"', `from ${JSON.stringify(entryPoint)}`));
  const module = (await import(file)) as { default: () => Promise<unknown> };
  return module.default();
}

describe("docs/library.md examples", () => {
  it("has the eight examples", () => {
    expect(examples.map((example) => example.name)).toEqual([
      "function-tool",
      "events-and-abort",
      "openai-compatible",
      "agent-file",
      "abilities",
      "agent-registry",
      "run-auto",
      "workflow",
    ]);
  });

  it("agent-registry: files read and checked, register and update, references resolved, agents ranked", async () => {
    const { ids, duplicate, agentPath, ranked, fallback } = (await runExample("agent-registry")) as {
      ids: string[];
      duplicate: string;
      agentPath: string;
      ranked: { agentId: string; confidence: number; reasons: string[] }[];
      fallback: { agentId: string; confidence: number }[];
    };
    expect(ids).toEqual(["coder", "researcher", "reviewer", "standard"]);
    expect(duplicate).toBe("AGENT_ID_DUPLICATE");
    expect(agentPath).toMatch(/agents\/researcher\.md$/);
    expect(ranked.map(({ agentId, confidence }) => [agentId, confidence])).toEqual([
      ["researcher", 0.55],
      ["coder", 0],
    ]);
    expect(fallback).toEqual([expect.objectContaining({ agentId: "standard", confidence: 0.5 })]);
  });

  it("run-auto: the selected agent runs, the selection reported and recorded in the contract", async () => {
    const { result, chosen } = (await runExample("run-auto")) as {
      result: { success: boolean; finalReport: { content: string }; transcript: { directory: string } };
      chosen: { selected: string; candidates: { agentId: string; confidence: number }[] };
    };
    expect(result.success).toBe(true);
    expect(result.finalReport.content).toBe("Three papers found.");
    expect(chosen.selected).toBe("researcher");
    const contract = JSON.parse(await readFile(join(result.transcript.directory, "contract.json"), "utf8"));
    expect(contract.agent_id).toBe("researcher");
    expect(JSON.parse(contract.decisions.agent_selection)).toEqual(chosen);
  });

  it("function-tool: a zod-typed function tool under tool_policy=required", async () => {
    const result = (await runExample("function-tool")) as {
      outcome: string;
      finalReport: { content: string };
      toolsUsed: string[];
    };
    expect(result.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(result.finalReport.content).toBe("21 °C in Lisbon.");
    expect(result.toolsUsed).toEqual(["get_weather"]);
  });

  it("events-and-abort: an abort while a tool runs ends INTERRUPTED, with events to the end", async () => {
    const { outcome, events } = (await runExample("events-and-abort")) as {
      outcome: string;
      events: string[];
    };
    expect(outcome).toBe("INTERRUPTED");
    expect(events.slice(0, 3)).toEqual(["turn_started", "model_attempt_started", "model_attempt_ended"]);
    expect(events.slice(-2)).toEqual(["final_report", "outcome"]);
  });

  it("openai-compatible: a real HTTP round trip with the temperature on the wire", async () => {
    const { result, sentTemperature } = (await runExample("openai-compatible")) as {
      result: { outcome: string; finalReport: { content: string } };
      sentTemperature: number;
    };
    expect(result.outcome).toBe("COMPLETED_CHAT_ONLY");
    expect(result.finalReport.content).toBe("Hello from the endpoint.");
    expect(sentTemperature).toBe(0.3);
  });

  it("agent-file: runAgent with layered configuration and a verifiable run directory", async () => {
    const { result, verified } = (await runExample("agent-file")) as {
      result: { success: boolean };
      verified: boolean;
    };
    expect(result.success).toBe(true);
    expect(verified).toBe(true);
  });

  it("abilities: the core ability, then the matched one, before the agent's prompt, in the contract", async () => {
    const { outcome, systemPrompt, injected, sameContract } = (await runExample("abilities")) as {
      outcome: string;
      systemPrompt: string;
      injected: string[];
      sameContract: boolean;
    };
    expect(outcome).toBe("COMPLETED_CHAT_ONLY");
    expect(systemPrompt).toBe(
      '<ability id="house-rules">\nBe brief.\n</ability>\n\n<ability id="indexes">\nIndex what a query filters on.\n</ability>\n\nYou tune queries.',
    );
    expect(injected).toEqual(["house-rules", "indexes"]);
    expect(sameContract).toBe(true);
  });

  it("workflow: interrupted in its second step, then resumed without running the first again", async () => {
    const { stopped, resumed, modelRequests } = (await runExample("workflow")) as {
      stopped: { status: string; steps: { status: string; report: string | null }[] };
      resumed: { status: string; output: unknown; workflowRunId: string };
      modelRequests: number;
    };
    expect(stopped.status).toBe("interrupted");
    expect(stopped.steps.map((step) => step.status)).toEqual(["completed", "interrupted"]);
    expect(stopped.steps[0]?.report).toBe("answer 1");
    expect(resumed).toMatchObject({ status: "completed", output: "answer 3" });
    // The outline was asked once in all: its output came back from the checkpoint.
    expect(modelRequests).toBe(3);
  });
});
