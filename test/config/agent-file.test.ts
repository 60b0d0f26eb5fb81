import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agentIdFromPath, loadAgentFile, parseAgentFile } from "../../src/config/agent-file.js";
import { agentSettingKeys } from "../../src/config/agent-settings-schema.js";
import { CharterError } from "../../src/foundation/charter-error.js";

const file = "/agents/reviewer.md";

function agentText(frontmatter: string, body = "You review code."): string {
  return `---\n${frontmatter}\n---\n${body}\n`;
}

function parseError(text: string, path = file): CharterError {
  try {
    parseAgentFile(text, path);
  } catch (error) {
    if (CharterError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected parseAgentFile to throw");
}

const everyKey = `description: Reviews pull requests
models: [local/qwen3, openai/gpt-4o-mini]
tools: [github, read_file]
temperature: 0.2
topP: 0.9
topK: 40
maxOutputTokens: 2048
frequencyPenalty: 0.1
presencePenalty: -0.5
seed: 7
stopSequences: ["END", "STOP"]
reasoning: medium
reasoningTokens: 4096
stream: true
maxTurns: 8
maxToolCallsPerTurn: 4
maxRetries: 2
maxFormatRetries: 0
maxTokensConsumed: 50000
toolTimeout: 30s
stepTimeout: 2m
totalTimeout: 1h
toolResponseMaxBytes: 4096
modelTimeout: 90s
modelResponseMaxBytes: 1000000
toolPolicy: required
allowedTools: [read_file]
cycleForbid: [[write_file, write_file], [apply_patch, revert_patch]]
strict: true
tokenGate: true
forceSynthesisAtRatio: 0.9
reservedSystemTokens: 500
reservedSynthesisTokens: 2000
contextWindowBufferTokens: 128
output:
  format: json
  schema:
    type: object
    required: [verdict]
modelProfile: qwen-strict
agents: [./helper.md]
destructiveTools: [drop_table]
approvedTools: [delete_file]
readOnlyTools: [github]
idempotentTools: read_file
maxDepth: 3
coreAbilities: house-rules
abilities: [indexes, joins]
abilityTokenBudget: 1500
inputSchema:
  type: object
  required: [prompt]`;

describe("parseAgentFile", () => {
  it("reads every frontmatter key, with durations in milliseconds and the body as the system prompt", () => {
    const agent = parseAgentFile(agentText(everyKey, "\nYou review pull requests.\n\nBe brief.\n"), file);
    expect(agent.id).toBe("reviewer");
    expect(agent.path).toBe(file);
    expect(agent.directory).toBe("/agents");
    expect(agent.systemPrompt).toBe("You review pull requests.\n\nBe brief.");
    expect(agent.settings).toEqual({
      description: "Reviews pull requests",
      models: ["local/qwen3", "openai/gpt-4o-mini"],
      tools: ["github", "read_file"],
      agents: ["./helper.md"],
      destructiveTools: ["drop_table"],
      approvedTools: ["delete_file"],
      readOnlyTools: ["github"],
      idempotentTools: ["read_file"],
      maxDepth: 3,
      coreAbilities: ["house-rules"],
      abilities: ["indexes", "joins"],
      abilityTokenBudget: 1500,
      inputSchema: { type: "object", required: ["prompt"] },
      temperature: 0.2,
      topP: 0.9,
      topK: 40,
      maxOutputTokens: 2048,
      frequencyPenalty: 0.1,
      presencePenalty: -0.5,
      seed: 7,
      stopSequences: ["END", "STOP"],
      reasoning: "medium",
      reasoningTokens: 4096,
      stream: true,
      maxTurns: 8,
      maxToolCallsPerTurn: 4,
      maxRetries: 2,
      maxFormatRetries: 0,
      maxTokensConsumed: 50000,
      toolTimeout: 30_000,
      stepTimeout: 120_000,
      totalTimeout: 3_600_000,
      toolResponseMaxBytes: 4096,
      modelTimeout: 90_000,
      modelResponseMaxBytes: 1_000_000,
      toolPolicy: "required",
      allowedTools: ["read_file"],
      cycleForbid: [
        ["write_file", "write_file"],
        ["apply_patch", "revert_patch"],
      ],
      strict: true,
      tokenGate: true,
      forceSynthesisAtRatio: 0.9,
      reservedSystemTokens: 500,
      reservedSynthesisTokens: 2000,
      contextWindowBufferTokens: 128,
      output: { format: "json", schema: { type: "object", required: ["verdict"] } },
      modelProfile: "qwen-strict",
    });
    // The fixture exercises every key the schema knows, so a new key cannot go untested.
    expect(Object.keys(agent.settings).sort()).toEqual([...agentSettingKeys].sort());
  });

  it("returns a deeply frozen definition", () => {
    const agent = parseAgentFile(agentText(everyKey), file);
    expect(Object.isFrozen(agent)).toBe(true);
    expect(Object.isFrozen(agent.settings.models)).toBe(true);
    expect(() => {
      (agent.settings.models as string[]).push("x/y");
    }).toThrow(TypeError);
  });

  it("reads a single model, tool or stop sequence as a list", () => {
    const agent = parseAgentFile(agentText("models: local/qwen3\ntools: github\nstopSequences: END"), file);
    expect(agent.settings.models).toEqual(["local/qwen3"]);
    expect(agent.settings.tools).toEqual(["github"]);
    expect(agent.settings.stopSequences).toEqual(["END"]);
  });

  it.each([
    ["500ms", 500],
    ["5s", 5000],
    ["1.5s", 1500],
    ["2m", 120_000],
    ["1h", 3_600_000],
    ["250", undefined],
    [250, 250],
  ])("reads the duration %j", (written, expected) => {
    const text = agentText(`toolTimeout: ${JSON.stringify(written)}`);
    if (expected === undefined) {
      expect(parseError(text).details).toMatchObject({ file, key: "toolTimeout" });
    } else {
      expect(parseAgentFile(text, file).settings.toolTimeout).toBe(expected);
    }
  });

  it.each(["5 parsecs", "0s", "-1s", "0.5ms", "true", "0", "-100", "1.25"])(
    "rejects the duration %s, naming the key",
    (written) => {
      const error = parseError(agentText(`stepTimeout: ${written}`));
      expect(error.code).toBe("AGENT_FILE_INVALID");
      expect(error.details).toMatchObject({ file, key: "stepTimeout", line: 2 });
    },
  );

  it("keeps null request parameters and limits as null (do not send / no limit)", () => {
    const nullable = [
      "temperature",
      "topP",
      "topK",
      "maxOutputTokens",
      "frequencyPenalty",
      "presencePenalty",
      "seed",
      "stopSequences",
      "maxTokensConsumed",
      "stepTimeout",
      "totalTimeout",
      "allowedTools",
      "forceSynthesisAtRatio",
    ];
    const agent = parseAgentFile(agentText(nullable.map((key) => `${key}: null`).join("\n")), file);
    for (const key of nullable) expect(agent.settings).toHaveProperty(key, null);
    // `~` is YAML's other spelling of null.
    expect(parseAgentFile(agentText("temperature: ~"), file).settings.temperature).toBeNull();
  });

  it("rejects null where a limit is required", () => {
    for (const key of ["maxTurns", "toolTimeout", "toolPolicy", "strict"]) {
      expect(parseError(agentText(`${key}: null`)).details).toMatchObject({ file, key });
    }
  });

  it("names the unknown key and the file", () => {
    const error = parseError(agentText("maxTurns: 3\nmaxTurn: 4"), "/agents/typo.md");
    expect(error.code).toBe("AGENT_FILE_INVALID");
    expect(error.details).toMatchObject({ file: "/agents/typo.md", key: "maxTurn", line: 3 });
  });

  it("suggests the nearest known key for an unknown one, top level and nested", () => {
    const error = parseError(agentText("maxTurns: 3\nmaxturn: 4"), "/agents/typo.md");
    expect(error.details).toMatchObject({ file: "/agents/typo.md", key: "maxturn", suggestion: "maxTurns" });
    expect(error.message).toContain("did you mean maxTurns?");
    const nested = parseError(agentText("output:\n  format: json\n  shema: {}"));
    expect(nested.details).toMatchObject({ key: "output.shema", suggestion: "schema" });
    const unrelated = parseError(agentText("colour: blue"));
    expect(unrelated.details.suggestion).toBeUndefined();
    expect(unrelated.message).not.toContain("did you mean");
  });

  it("names an unknown nested key by its path", () => {
    const error = parseError(agentText("output:\n  format: json\n  colour: blue"));
    expect(error.details).toMatchObject({ file, key: "output.colour", line: 4 });
  });

  it("names the key path and the problem of a bad value", () => {
    const error = parseError(agentText("toolPolicy: sometimes"));
    expect(error.details).toMatchObject({ file, key: "toolPolicy" });
    const nested = parseError(agentText("models:\n  - local/qwen3\n  - no-slash"));
    expect(nested.details).toMatchObject({ file, key: "models[1]", line: 4 });
    const tuple = parseError(agentText("cycleForbid: [[a, b, c]]"));
    expect(tuple.details).toMatchObject({ key: "cycleForbid[0]" });
  });

  it("lists every problem, not only the first", () => {
    const error = parseError(agentText("maxTurns: 0\ntopP: 2\nbogus: 1"));
    const keys = (error.details.issues as { key: string }[]).map((issue) => issue.key).sort();
    expect(keys).toEqual(["bogus", "maxTurns", "topP"]);
  });

  it("refuses an output schema unless the format is json", () => {
    const error = parseError(agentText("output:\n  format: text\n  schema: { type: object }"));
    expect(error.details).toMatchObject({ key: "output.schema" });
    expect(parseError(agentText("output:\n  format: yaml")).details).toMatchObject({ key: "output.format" });
  });

  it("reports a YAML syntax error with its line and column in the file", () => {
    // The frontmatter starts on the file's line 2: positions are counted in the whole file.
    const unclosedList = parseError(agentText("maxTurns: 3\ntools: [github, read_file\nstrict: true"));
    expect(unclosedList.code).toBe("AGENT_FILE_INVALID");
    expect(unclosedList.details).toMatchObject({ file, line: 4, column: 1 });
    const nestedMapping = parseError(agentText("maxTurns: 3\nstrict: yes: no"));
    expect(nestedMapping.details).toMatchObject({ file, line: 3, column: 9 });
  });

  it("reports a duplicate key as a YAML error with its position", () => {
    const error = parseError(agentText("maxTurns: 3\nstrict: true\nmaxTurns: 4"));
    expect(error.details).toMatchObject({ file, line: 4, column: 1 });
  });

  it("refuses a frontmatter that is not a mapping", () => {
    expect(parseError(agentText("- a\n- b")).details).toMatchObject({ file });
  });

  it("refuses a frontmatter that is never closed", () => {
    expect(parseError("---\nmaxTurns: 3\nYou review code.").details).toMatchObject({ file, line: 1 });
  });

  it("reads a file without frontmatter as a system prompt with no settings", () => {
    const agent = parseAgentFile("You are terse.\n---\nnot frontmatter", file);
    expect(agent.settings).toEqual({});
    expect(agent.systemPrompt).toBe("You are terse.\n---\nnot frontmatter");
  });

  it("accepts an empty frontmatter, CRLF line endings and a byte-order mark", () => {
    expect(parseAgentFile("---\n---\nHello", file).settings).toEqual({});
    const agent = parseAgentFile("\uFEFF---\r\nmaxTurns: 2\r\n---\r\nHello\r\n", file);
    expect(agent.settings).toEqual({ maxTurns: 2 });
    expect(agent.systemPrompt).toBe("Hello");
  });
});

describe("agentIdFromPath", () => {
  it.each([
    ["/a/reviewer.md", "reviewer"],
    ["/a/PR Reviewer.md", "pr-reviewer"],
    ["/a/code.review.agent.md", "code-review-agent"],
    ["/a/__Weird__Name!!.markdown", "weird-name"],
    ["/a/---.md", "agent"],
    ["relative/Plain", "plain"],
  ])("%s -> %s", (path, id) => {
    expect(agentIdFromPath(path)).toBe(id);
  });
});

describe("loadAgentFile", () => {
  let directory: string;
  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), "charter-agent-"));
  });
  afterEach(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it("reads a real file and resolves its path", async () => {
    const path = join(directory, "My Agent.md");
    await writeFile(path, agentText("maxTurns: 5\ntoolTimeout: 500ms", "Do the thing."));
    const agent = await loadAgentFile(path);
    expect(agent).toMatchObject({
      id: "my-agent",
      path,
      directory,
      systemPrompt: "Do the thing.",
      settings: { maxTurns: 5, toolTimeout: 500 },
    });
  });

  it("names a missing file", async () => {
    const path = join(directory, "absent.md");
    const error = await loadAgentFile(path).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(CharterError.isInstance(error) && error.code).toBe("AGENT_FILE_INVALID");
    expect((error as CharterError).details).toMatchObject({ file: path, reason: "ENOENT" });
  });

  it("names the file in a validation error", async () => {
    const path = join(directory, "bad.md");
    await writeFile(path, agentText("unknownSetting: 1"));
    await expect(loadAgentFile(path)).rejects.toMatchObject({
      code: "AGENT_FILE_INVALID",
      details: { file: path, key: "unknownSetting" },
    });
  });
});

describe("registry profile keys", () => {
  it("reads id, enabled, keywords, exampleTasks, notForTasks and delegation apart from the contract settings", () => {
    const agent = parseAgentFile(
      agentText(
        "id: code-reviewer\nenabled: false\nkeywords: review\nexampleTasks: [Review this diff]\nnotForTasks: [Write a poem]\ndelegation: auto\nmaxTurns: 3",
      ),
      file,
    );
    expect(agent.id).toBe("code-reviewer");
    expect(agent.profile).toEqual({
      enabled: false,
      keywords: ["review"],
      exampleTasks: ["Review this diff"],
      notForTasks: ["Write a poem"],
      delegation: "auto",
    });
    expect(agent.settings).toEqual({ maxTurns: 3 });
    expect(agent.builtIn).toBe(false);
    // Without them: the id from the file name and an enabled agent with nothing to select it by.
    expect(parseAgentFile(agentText("maxTurns: 3"), file)).toMatchObject({
      id: "reviewer",
      profile: { enabled: true, keywords: [], exampleTasks: [], notForTasks: [], delegation: "none" },
    });
  });

  it.each(["Reviewer", "code_reviewer", "-reviewer", "code--reviewer", ""])(
    "refuses the explicit id %j, which is not lowercase letters, digits and single hyphens",
    (id) => {
      const error = parseError(agentText(`id: ${JSON.stringify(id)}`));
      expect(error.code).toBe("AGENT_FILE_INVALID");
      expect(error.details).toMatchObject({ file, key: "id", line: 2 });
    },
  );

  it("keeps the registry keys out of the configuration defaults and --set", async () => {
    const { parseSetOverrides } = await import("../../src/config/parse-set-overrides.js");
    const { configurationLayerSchema } = await import("../../src/config/configuration-schema.js");
    expect(() => parseSetOverrides(["keywords=x"])).toThrow(/unknown key/);
    expect(configurationLayerSchema.safeParse({ defaults: { id: "x" } }).success).toBe(false);
  });
});
