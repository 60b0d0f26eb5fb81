import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ExecutionContract } from "../../src/contract/execution-contract.js";
import { blake3Hex } from "../../src/foundation/content-hash.js";
import { createTokenEstimator } from "../../src/model/token-estimator.js";
import { runAgent } from "../../src/runner/run-agent.js";
import type { AIAgentResult } from "../../src/session/agent-result.js";
import {
  type RecordedRequest,
  type ScriptedOpenAIServer,
  startScriptedOpenAIServer,
} from "../../src/testing/scripted-openai-server.js";
import { charterProcess, cli, localModelProvider, recordingWorkspace } from "./cli-harness.js";

/**
 * Abilities for real: ability files in a folder, an agent file naming them, the scripted model server seeing what
 * the model would see, and (for the first and the last) `charter run` as a child process.
 */
let server: ScriptedOpenAIServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const answer = {
  kind: "tool_calls",
  calls: [{ name: "final_report", arguments: { format: "markdown", content: "done" } }],
} as const;

interface WireMessage {
  readonly role: string;
  readonly content: string;
}

function messagesOf(request: RecordedRequest | undefined): WireMessage[] {
  return (request?.body as { messages?: WireMessage[] } | undefined)?.messages ?? [];
}

function ability(id: string, keywords: readonly string[], knowledge: string): string {
  return `---\nid: ${id}\nkeywords: [${keywords.join(", ")}]\n---\n${knowledge}\n`;
}

/** A folder with `.charter.json` (the scripted server as `local/m`), `abilities/*.md` and `agent.md`. */
async function workspace(options: {
  readonly abilities: Readonly<Record<string, string>>;
  readonly frontmatter: string;
  readonly body?: string;
}) {
  server ??= await startScriptedOpenAIServer({ respond: () => answer });
  const directory = await mkdtemp(join(tmpdir(), "charter-abilities-"));
  await mkdir(join(directory, "abilities"));
  for (const [name, text] of Object.entries(options.abilities))
    await writeFile(join(directory, "abilities", name), text);
  await writeFile(
    join(directory, "agent.md"),
    `---\nmodels: [local/m]\n${options.frontmatter}\n---\n${options.body ?? "You review SQL changes."}\n`,
  );
  await writeFile(
    join(directory, ".charter.json"),
    JSON.stringify({ providers: localModelProvider(server.baseUrl) }),
  );
  return directory;
}

/** `charter run agent.md <task> --json` as a child process in the workspace, and the run's stored contract. */
async function charterRun(directory: string, task: string) {
  const output = await charterProcess(
    [
      "run",
      join(directory, "agent.md"),
      task,
      "--json",
      "--store",
      join(directory, "charter.db"),
      "--runs-dir",
      join(directory, "runs"),
    ],
    { cwd: directory },
  );
  const result = JSON.parse(output.stdout) as AIAgentResult;
  const contract = JSON.parse(
    await readFile(join(directory, "runs", result.runId, "contract.json"), "utf8"),
  ) as ExecutionContract;
  return { ...output, result, contract };
}

describe("abilities", () => {
  it("INV-AGT-ABL-001 abilities injected before prompt", async () => {
    const directory = await workspace({
      abilities: {
        "sql-style.md": ability("sql-style", ["sql"], "Write SQL keywords in capitals."),
      },
      frontmatter: "coreAbilities: [sql-style]",
    });
    const first = await charterRun(directory, "Review this migration.");
    expect(first.exitCode).toBe(0);
    expect(first.result.outcome).toBe("COMPLETED_CHAT_ONLY");

    // The very first request the model received already opens with the ability: nothing was added later.
    const [opening] = server!.requests;
    expect(opening?.completionIndex).toBe(0);
    const [system, user] = messagesOf(opening);
    expect(system?.role).toBe("system");
    expect(system?.content).toBe(
      '<ability id="sql-style">\nWrite SQL keywords in capitals.\n</ability>\n\nYou review SQL changes.',
    );
    expect(user).toMatchObject({ role: "user", content: "Review this migration." });

    // What the model saw is what the contract holds and hashes, with the ability's id and content hash.
    expect(first.contract.system_prompt).toBe(system?.content);
    expect(first.contract.schema_version).toBe(4);
    expect(first.contract.abilities?.injected).toEqual([
      {
        id: "sql-style",
        kind: "core",
        content_hash: blake3Hex("Write SQL keywords in capitals."),
        relevance: null,
        tokens: expect.any(Number),
        truncated: false,
      },
    ]);
    expect(first.result.contractHash).toBe(first.contract.contract_hash);

    // Other knowledge, another contract: the ability's content is part of the hash.
    await writeFile(
      join(directory, "abilities", "sql-style.md"),
      ability("sql-style", ["sql"], "Write SQL keywords in lower case."),
    );
    const second = await charterRun(directory, "Review this migration.");
    expect(second.exitCode).toBe(0);
    expect(second.contract.abilities?.injected[0]?.content_hash).toBe(
      blake3Hex("Write SQL keywords in lower case."),
    );
    expect(second.result.contractHash).not.toBe(first.result.contractHash);
    expect(messagesOf(server!.requests[1])[0]?.content).toContain("Write SQL keywords in lower case.");
  });

  it("INV-AGT-ABL-002 core abilities always included", async () => {
    const directory = await workspace({
      abilities: {
        "zeta-house-rules.md": ability("zeta-house-rules", ["deploy"], "House rules: be brief."),
        "alpha-glossary.md": ability("alpha-glossary", ["kubernetes"], "A pod is a group of containers."),
        "indexes.md": ability("indexes", ["index", "query"], "Index the columns a query filters on."),
        "joins.md": ability("joins", ["join"], "Prefer explicit JOIN syntax."),
        "billing.md": ability("billing", ["invoice"], "Invoices are immutable."),
      },
      // The core order is the agent's, not the alphabet's; the candidates come after them.
      frontmatter: "coreAbilities: [zeta-house-rules, alpha-glossary]\nabilities: [billing, joins, indexes]",
    });
    const run = (task: string) =>
      runAgent({
        agentPath: join(directory, "agent.md"),
        prompt: task,
        cwd: directory,
        homeDirectory: directory,
        store: join(directory, "charter.db"),
        runsDirectory: join(directory, "runs"),
      });
    const ids = (content: string) => [...content.matchAll(/<ability id="([a-z0-9-]+)">/g)].map((m) => m[1]);

    // A task no keyword of any ability matches: the core abilities are there all the same, first, in order.
    const unrelated = await run("Say hello.");
    expect(unrelated.outcome).toBe("COMPLETED_CHAT_ONLY");
    const unrelatedSystem = messagesOf(server!.requests[0])[0]!.content;
    expect(ids(unrelatedSystem)).toEqual(["zeta-house-rules", "alpha-glossary"]);
    expect(
      unrelatedSystem.startsWith('<ability id="zeta-house-rules">\nHouse rules: be brief.\n</ability>'),
    ).toBe(true);

    // A task matching two candidates (indexes by two keywords, joins by one): core first, then by relevance.
    await run("Which index helps this query with a join?");
    const matchedSystem = messagesOf(server!.requests[1])[0]!.content;
    expect(ids(matchedSystem)).toEqual(["zeta-house-rules", "alpha-glossary", "indexes", "joins"]);
    expect(matchedSystem.endsWith("</ability>\n\nYou review SQL changes.")).toBe(true);
  });

  it("INV-AGT-ABL-003 token limit respected", async () => {
    const estimator = createTokenEstimator();
    const long = (topic: string, sentences: number) =>
      Array.from(
        { length: sentences },
        (_, index) => `${topic} rule ${index + 1}: check the ${topic} twice.`,
      ).join(" ");
    const budget = 120;
    const directory = await workspace({
      abilities: {
        "house-rules.md": ability("house-rules", ["deploy"], "Be brief and precise."),
        "indexes.md": ability("indexes", ["index", "query"], long("index", 40)),
        "joins.md": ability("joins", ["join"], long("join", 40)),
      },
      frontmatter: `coreAbilities: [house-rules]\nabilities: [indexes, joins]\nabilityTokenBudget: ${budget}`,
      body: "You tune queries.",
    });
    const run = await charterRun(directory, "Which index helps this query with a join?");
    expect(run.exitCode).toBe(0);

    // The text injected before the agent's own prompt, counted with the context guard's tokenizer, fits.
    const system = messagesOf(server!.requests[0])[0]!.content;
    expect(system.endsWith("\n\nYou tune queries.")).toBe(true);
    const injected = system.slice(0, -"\n\nYou tune queries.".length);
    const tokens = estimator.countText(injected);
    expect(tokens).toBeLessThanOrEqual(budget);
    expect(run.contract.abilities).toMatchObject({ token_budget: budget, tokens });

    // The core ability whole, then the most relevant one cut at a token boundary, and the last left out.
    expect(injected.startsWith('<ability id="house-rules">\nBe brief and precise.\n</ability>\n\n')).toBe(
      true,
    );
    const cut = /<ability id="indexes">\n([\s\S]*)\n<\/ability>$/.exec(injected)?.[1] ?? "";
    expect(cut.length).toBeGreaterThan(0);
    expect(long("index", 40).startsWith(cut)).toBe(true);
    expect(cut.length).toBeLessThan(long("index", 40).length);
    expect(injected).not.toContain("join rule");
    expect(run.contract.abilities?.injected.map((entry) => [entry.id, entry.truncated])).toEqual([
      ["house-rules", false],
      ["indexes", true],
    ]);
    expect(run.contract.abilities?.left_out.map((entry) => entry.id)).toEqual(["joins"]);

    // Named in the contract's decisions, and on stderr.
    expect(run.contract.decisions.ability_token_budget).toBe("agent");
    expect(run.contract.decisions.abilities_cut).toMatch(
      /^token budget 120: indexes cut to \d+ of \d+ tokens; joins left out$/,
    );
    expect(run.stderr).toContain(
      `charter: warning: agent agent: abilities cut to fit abilityTokenBudget (${run.contract.decisions.abilities_cut})`,
    );

    // A run under a contract with abilities verifies and replays like any other, from the store and from its folder.
    const store = join(directory, "charter.db");
    const verified = await cli(["verify", run.result.runId, "--store", store, "--json"]);
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true });
    const fromFolder = await cli(["verify", join(directory, "runs", run.result.runId), "--json"]);
    expect(JSON.parse(fromFolder.stdout)).toMatchObject({ ok: true });
    const replayed = await cli(["replay", run.result.runId, "--store", store, "--json"]);
    expect(JSON.parse(replayed.stdout)).toMatchObject({ ok: true, headHash: run.result.transcript.headHash });
  });
});

describe("abilities are checked at load, and a resumed run gets the same ones", () => {
  it("an agent naming an ability that does not exist stops before any inference, and nothing is stored", async () => {
    const directory = await workspace({
      abilities: { "sql-style.md": ability("sql-style", ["sql"], "Capitals.") },
      frontmatter: "coreAbilities: [sql-style]\nabilities: [sql-styel]",
    });
    const output = await charterProcess(
      ["run", join(directory, "agent.md"), "Go.", "--json", "--store", join(directory, "charter.db")],
      { cwd: directory },
    );
    expect(output.exitCode).toBe(4);
    const result = JSON.parse(output.stdout) as AIAgentResult;
    expect(result.error).toMatchObject({
      code: "ABILITY_UNKNOWN",
      details: {
        file: join(directory, "agent.md"),
        key: "abilities",
        id: "sql-styel",
        suggestion: "sql-style",
      },
    });
    expect(server!.requests).toEqual([]);
    const listed = await charterProcess(
      ["runs", "list", "--json", "--store", join(directory, "charter.db")],
      {
        cwd: directory,
      },
    );
    expect(JSON.parse(listed.stdout)).toEqual([]);
  });

  it("a sub-agent's unknown ability stops its parent at load, and an invalid ability file names its key", async () => {
    const directory = await workspace({
      abilities: { "sql-style.md": ability("sql-style", ["sql"], "Capitals.") },
      frontmatter: "agents: [./child.md]",
    });
    await writeFile(
      join(directory, "child.md"),
      "---\nmodels: [local/m]\ncoreAbilities: [missing]\n---\nChild.\n",
    );
    const run = () =>
      runAgent({
        agentPath: join(directory, "agent.md"),
        prompt: "Delegate.",
        cwd: directory,
        homeDirectory: directory,
        store: join(directory, "charter.db"),
        runsDirectory: join(directory, "runs"),
      });
    expect((await run()).error).toMatchObject({
      code: "ABILITY_UNKNOWN",
      details: { file: join(directory, "child.md"), key: "coreAbilities", id: "missing" },
    });
    await writeFile(join(directory, "abilities", "missing.md"), "---\nid: missing\nkeywords: 42\n---\nM.\n");
    expect((await run()).error).toMatchObject({
      code: "ABILITY_INVALID",
      details: { file: join(directory, "abilities", "missing.md"), key: "keywords", line: 3 },
    });
    expect(server!.requests).toEqual([]);
  });

  it("abilitiesDir is relative to the configuration file that sets it", async () => {
    const directory = await workspace({ abilities: {}, frontmatter: "coreAbilities: [house]" });
    await mkdir(join(directory, "settings", "knowledge"), { recursive: true });
    await writeFile(
      join(directory, "settings", "knowledge", "house.md"),
      ability("house", [], "House rules."),
    );
    await writeFile(join(directory, "settings", "team.json"), JSON.stringify({ abilitiesDir: "knowledge" }));
    const result = await runAgent({
      agentPath: join(directory, "agent.md"),
      prompt: "Go.",
      configPath: join(directory, "settings", "team.json"),
      cwd: directory,
      homeDirectory: directory,
      store: join(directory, "charter.db"),
      runsDirectory: join(directory, "runs"),
    });
    expect(result.outcome).toBe("COMPLETED_CHAT_ONLY");
    expect(messagesOf(server!.requests[0])[0]?.content).toBe(
      '<ability id="house">\nHouse rules.\n</ability>\n\nYou review SQL changes.',
    );
  });

  it("a resumed run chooses the same abilities for its task, and is refused when their knowledge changed", async () => {
    server = await startScriptedOpenAIServer({
      script: [
        {
          kind: "tool_calls",
          calls: [{ id: "call_erase", name: "test__record", arguments: { key: "k", value: "v" } }],
        },
        answer,
      ],
    });
    const { directory } = await recordingWorkspace({
      prefix: "charter-abilities-resume-",
      baseUrl: server.baseUrl,
      frontmatter:
        "models: [local/m]\ntools: [test]\ndestructiveTools: [test__record]\nabilities: [indexes, joins]",
      body: "You tune queries.",
      // Found beside the agent file, whatever the working directory of the (in-process) CLI.
      configuration: { abilitiesDir: "abilities" },
    });
    await mkdir(join(directory, "abilities"));
    await writeFile(
      join(directory, "abilities", "indexes.md"),
      ability("indexes", ["index"], "Index filters."),
    );
    await writeFile(join(directory, "abilities", "joins.md"), ability("joins", ["join"], "Explicit joins."));
    const charter = (argv: readonly string[]) =>
      cli([...argv, "--json", "--store", join(directory, "charter.db")]);

    const stopped = JSON.parse(
      (
        await charter([
          "run",
          join(directory, "agent.md"),
          "Add an index.",
          "--runs-dir",
          join(directory, "runs"),
        ])
      ).stdout,
    ) as AIAgentResult;
    expect(stopped.error?.code).toBe("APPROVAL_REQUIRED");
    expect(messagesOf(server.requests[0])[0]?.content).toBe(
      '<ability id="indexes">\nIndex filters.\n</ability>\n\nYou tune queries.',
    );

    // Changed knowledge gives another contract: the run is not continued under it.
    await writeFile(
      join(directory, "abilities", "indexes.md"),
      ability("indexes", ["index"], "Index nothing."),
    );
    const refused = JSON.parse((await charter(["resume", stopped.runId, "--approve", "call_erase"])).stdout);
    expect(refused.error?.code).toBe("RUN_NOT_RESUMABLE");

    await writeFile(
      join(directory, "abilities", "indexes.md"),
      ability("indexes", ["index"], "Index filters."),
    );
    const resumed = JSON.parse(
      (await charter(["resume", stopped.runId, "--approve", "call_erase"])).stdout,
    ) as AIAgentResult;
    expect(resumed.outcome).toBe("COMPLETED_WITH_TOOLS");
    expect(resumed.contractHash).toBe(stopped.contractHash);
    expect(messagesOf(server.requests[1])[0]?.content).toBe(messagesOf(server.requests[0])[0]?.content);
  });
});

describe("charter doctor", () => {
  it("checks the abilities an agent names, with the fix for an unknown id", async () => {
    const directory = await workspace({
      abilities: { "sql-style.md": ability("sql-style", ["sql"], "Capitals.") },
      frontmatter: "coreAbilities: [sql-style]\nabilities: [sql-styel]",
    });
    const failing = await charterProcess(["doctor", join(directory, "agent.md"), "--json"], {
      cwd: directory,
    });
    const report = JSON.parse(failing.stdout) as {
      checks: { check: string; ok: boolean; code?: string; fix?: string }[];
    };
    expect(report.checks.find((check) => check.check === "abilities")).toMatchObject({
      ok: false,
      code: "ABILITY_UNKNOWN",
      fix: `in ${join(directory, "agent.md")}, change "sql-styel" in abilities to "sql-style"`,
    });
    expect(failing.exitCode).toBe(4);

    await writeFile(
      join(directory, "agent.md"),
      "---\nmodels: [local/m]\ncoreAbilities: [sql-style]\n---\nHi.\n",
    );
    const passing = await charterProcess(["doctor", join(directory, "agent.md")], { cwd: directory });
    expect(passing.stdout).toContain(
      "ok    abilities: core: sql-style; when the task matches: none; budget 2000 tokens",
    );
    expect(passing.exitCode).toBe(0);
  });
});
