// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are configuration placeholders, not templates.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadAgentFile } from "../../src/config/agent-file.js";
import { loadConfiguration } from "../../src/config/load-configuration.js";
import { parseSetOverrides } from "../../src/config/parse-set-overrides.js";
import { resolveModelTargets, selectModelReferences } from "../../src/config/resolve-model-targets.js";
import { buildExecutionContract } from "../../src/contract/contract-factory.js";
import { assertContractProvenance } from "../../src/contract/contract-factory-provenance.js";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { manifestEntry } from "../contract/contract-factory-fixtures.js";

let root: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "charter-agent-contract-"));
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("from files and command line to a contract", () => {
  it("applies command line > agent > configuration defaults > per-model > built-in defaults", async () => {
    const agentsDirectory = join(root, "agents");
    await mkdir(agentsDirectory);
    await mkdir(join(root, "home", ".charter"), { recursive: true });
    await writeFile(
      join(agentsDirectory, "Code Reviewer.md"),
      "---\nmodels: [local/qwen3, local/small]\nmaxTurns: 6\ntoolTimeout: 20s\ntoolPolicy: required\n---\nReview the diff.\n",
    );
    // The agent's directory is configuration layer 3.
    await writeFile(
      join(agentsDirectory, ".charter.json"),
      JSON.stringify({ defaults: { maxTurns: 99, maxRetries: 2, stepTimeout: "2m" } }),
    );
    await writeFile(
      join(root, "home", ".charter", "charter.json"),
      JSON.stringify({
        providers: {
          local: {
            type: "openai-compatible",
            baseUrl: "http://127.0.0.1:1/v1",
            apiKey: "${LOCAL_KEY}",
            models: {
              qwen3: { contextWindow: 32_768, temperature: 0.6, topK: 20 },
              small: { contextWindow: 8192, contextWindowBufferTokens: 512 },
            },
          },
        },
        defaults: { reservedSynthesisTokens: 2048 },
      }),
    );
    await writeFile(join(root, "home", ".charter", ".charter.env"), "LOCAL_KEY=sk-home-secret\n");

    const agent = await loadAgentFile(join(agentsDirectory, "Code Reviewer.md"));
    const { configuration, secrets } = await loadConfiguration({
      cwd: join(root, "work"),
      promptDirectory: agent.directory,
      homeDirectory: join(root, "home"),
      etcDirectory: join(root, "etc"),
      processEnvironment: {},
    });
    const overrides = parseSetOverrides(["temperature=null", "maxRetries=5"]);
    const targets = resolveModelTargets(
      selectModelReferences(overrides, agent.settings, configuration.defaults),
      configuration,
    );
    const contract = buildExecutionContract({
      agent,
      configurationDefaults: configuration.defaults,
      overrides,
      modelTargets: targets,
      toolManifest: [manifestEntry("read_file")],
      parentContractHash: null,
      adapterVersion: "protocol-adapter/1",
      environment: deterministicEnvironment(),
    });

    assertContractProvenance(contract);
    expect(secrets).toEqual([
      { value: "sk-home-secret", label: join(root, "home", ".charter", ".charter.env:LOCAL_KEY") },
    ]);
    expect(targets[0]?.connection.apiKey).toBe("sk-home-secret");
    expect(JSON.stringify(contract)).not.toContain("sk-home-secret");
    expect(contract).toMatchObject({
      agent_id: "code-reviewer",
      system_prompt: "Review the diff.",
      model_profile_id: "local/qwen3",
      max_inferences: 6,
      max_retries: 5,
      tool_timeout_ms: 20_000,
      step_timeout_ms: 120_000,
      tool_policy: "required",
      context_budget: { context_window: 8192, context_window_buffer_tokens: 512, reserved_synthesis: 2048 },
      request_parameters: { temperature: null, top_k: 20, max_output_tokens: 4096 },
    });
    expect(contract.decisions).toMatchObject({
      temperature: "cli",
      max_retries: "cli",
      max_inferences: "agent",
      tool_timeout_ms: "agent",
      tool_policy: "agent",
      step_timeout_ms: "configuration",
      reserved_synthesis: "configuration",
      top_k: "model",
      context_window: "model",
      context_window_buffer_tokens: "model",
      max_tool_calls_per_turn: "default",
    });
  });
});
