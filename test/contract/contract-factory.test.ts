import { describe, expect, it } from "vitest";
import { contractDefaults } from "../../src/contract/contract-defaults.js";
import { buildExecutionContract } from "../../src/contract/contract-factory.js";
import type { ContractSettings } from "../../src/contract/contract-factory-input.js";
import { computeContractHash } from "../../src/contract/contract-hash.js";
import { executionContractSchema } from "../../src/contract/execution-contract.js";
import { CharterError } from "../../src/foundation/charter-error.js";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { factoryInput, manifestEntry } from "./contract-factory-fixtures.js";

const defaultParameters = {
  temperature: null,
  top_p: null,
  top_k: null,
  max_output_tokens: 4096,
  frequency_penalty: null,
  presence_penalty: null,
  seed: null,
  stop_sequences: null,
  reasoning: null,
  reasoning_tokens: null,
};

function buildFailure(input: Parameters<typeof buildExecutionContract>[0]): CharterError {
  try {
    buildExecutionContract(input);
  } catch (error) {
    if (CharterError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected buildExecutionContract to throw");
}

describe("buildExecutionContract", () => {
  it("builds a valid contract from the built-in defaults, with provenance", () => {
    const environment = deterministicEnvironment({ start: Date.UTC(2026, 4, 1, 12) });
    const contract = buildExecutionContract(factoryInput({ environment }));
    expect(executionContractSchema.safeParse(contract).success).toBe(true);
    expect(contract).toMatchObject({
      contract_id: "contract_0001",
      created_at: "2026-05-01T12:00:00.000Z",
      schema_version: 3,
      parent_contract_hash: null,
      model_profile_id: "local/qwen3",
      agent_id: "reviewer",
      system_prompt: "You review code.",
      tool_policy: contractDefaults.toolPolicy,
      allowed_tools: null,
      strict_mode: false,
      max_inferences: 10,
      max_tokens_consumed: null,
      max_format_retries: 1,
      max_retries: 3,
      max_tool_calls_per_turn: 10,
      step_timeout_ms: null,
      total_timeout_ms: null,
      tool_timeout_ms: 60_000,
      context_budget: {
        context_window: 32_768,
        context_window_buffer_tokens: 256,
        max_output_tokens: 4096,
        reserved_system: 0,
        reserved_synthesis: 1024,
        force_synthesis_at_ratio: null,
      },
      tool_output_budget: {
        max_bytes_per_call: 12_288,
        truncation_marker: "[…truncated]",
        summarizer_model: null,
      },
      adapter_version: "protocol-adapter/1",
      grammar_profile: null,
      grammar: null,
      logits_mask: null,
      token_gate: false,
      speculative_exec: false,
      cycle_forbid: [],
      model_targets: [
        {
          provider: "local",
          model: "qwen3",
          context_window: 32_768,
          context_window_buffer_tokens: 256,
          tokenizer: null,
          request_parameters: defaultParameters,
          model_timeout_ms: 180_000,
          max_response_bytes: 4_194_304,
        },
      ],
      request_parameters: defaultParameters,
      stream: false,
      output: { format: "markdown", schema: null },
    });
    expect(contract.contract_hash).toBe(computeContractHash(contract));
    expect(contract.tool_manifest.map((tool) => tool.name)).toEqual([
      "apply_patch",
      "final_report",
      "read_file",
    ]);
    expect(Object.entries(contract.decisions).filter(([, source]) => source !== "default")).toEqual([
      ["context_window", "model"],
    ]);
  });

  it("uses the default context window for a target that declares none", () => {
    const contract = buildExecutionContract(factoryInput({ modelTargets: [{ provider: "p", model: "m" }] }));
    expect(contract.context_budget.context_window).toBe(contractDefaults.contextWindow);
    expect(contract.decisions.context_window).toBe("default");
  });

  it("records the parent contract hash and an explicit model profile id", () => {
    const parent = "a".repeat(64);
    const contract = buildExecutionContract(
      factoryInput({ parentContractHash: parent, modelProfileId: "qwen-strict" }),
    );
    expect(contract.parent_contract_hash).toBe(parent);
    expect(contract.model_profile_id).toBe("qwen-strict");
    expect(contract.decisions.model_profile_id).toBe("input");
  });
});

type Layer = "cli" | "agent" | "configuration" | "model";

interface PrecedenceCase {
  readonly key: keyof ContractSettings;
  /** Highest first; request parameters put the per-model configuration right after the command line. */
  readonly order?: readonly Layer[];
  readonly decision: string;
  readonly read: (contract: ReturnType<typeof buildExecutionContract>) => unknown;
  /** The value each layer sets, and the value the contract gets from it. */
  readonly values: Readonly<Partial<Record<Layer, readonly [unknown, unknown]>>>;
  readonly fallback: unknown;
}

const precedenceCases: readonly PrecedenceCase[] = [
  {
    key: "maxTurns",
    decision: "max_inferences",
    read: (contract) => contract.max_inferences,
    values: { cli: [5, 5], agent: [6, 6], configuration: [7, 7] },
    fallback: 10,
  },
  {
    key: "temperature",
    order: ["cli", "model", "agent", "configuration"],
    decision: "temperature",
    read: (contract) => [
      contract.request_parameters.temperature,
      contract.model_targets[0]?.request_parameters.temperature,
    ],
    values: {
      cli: [0.1, [0.1, 0.1]],
      model: [null, [null, null]],
      agent: [0.2, [0.2, 0.2]],
      configuration: [0.3, [0.3, 0.3]],
    },
    fallback: [null, null],
  },
  {
    key: "reasoning",
    order: ["cli", "model", "agent", "configuration"],
    decision: "reasoning",
    read: (contract) => contract.model_targets[0]?.request_parameters.reasoning,
    values: {
      cli: ["high", "high"],
      model: ["none", "none"],
      agent: ["low", "low"],
      configuration: ["medium", "medium"],
    },
    fallback: null,
  },
  {
    key: "reasoningTokens",
    order: ["cli", "model", "agent", "configuration"],
    decision: "reasoning_tokens",
    read: (contract) => contract.model_targets[0]?.request_parameters.reasoning_tokens,
    values: { cli: [null, null], model: [4096, 4096], agent: [2048, 2048], configuration: [1024, 1024] },
    fallback: null,
  },
  {
    key: "stream",
    decision: "stream",
    read: (contract) => contract.stream,
    values: { cli: [false, false], agent: [true, true], configuration: [false, false] },
    fallback: false,
  },
  {
    key: "toolPolicy",
    decision: "tool_policy",
    read: (contract) => contract.tool_policy,
    values: {
      cli: ["forbidden", "forbidden"],
      agent: ["required", "required"],
      configuration: ["forbidden", "forbidden"],
    },
    fallback: "optional",
  },
  {
    key: "maxOutputTokens",
    order: ["cli", "model", "agent", "configuration"],
    decision: "max_output_tokens",
    read: (contract) => [
      contract.request_parameters.max_output_tokens,
      contract.context_budget.max_output_tokens,
    ],
    values: {
      cli: [null, [null, 4096]],
      model: [3000, [3000, 3000]],
      agent: [1000, [1000, 1000]],
      configuration: [2000, [2000, 2000]],
    },
    fallback: [4096, 4096],
  },
  {
    key: "contextWindowBufferTokens",
    decision: "context_window_buffer_tokens",
    read: (contract) => [
      contract.context_budget.context_window_buffer_tokens,
      contract.model_targets[0]?.context_window_buffer_tokens,
    ],
    values: {
      cli: [10, [10, 10]],
      agent: [20, [20, 20]],
      configuration: [30, [30, 30]],
      model: [40, [40, 40]],
    },
    fallback: [256, 256],
  },
  {
    key: "stepTimeout",
    decision: "step_timeout_ms",
    read: (contract) => contract.step_timeout_ms,
    values: { cli: [null, null], agent: [1000, 1000], configuration: [2000, 2000] },
    fallback: null,
  },
  {
    key: "output",
    decision: "output",
    read: (contract) => contract.output,
    values: {
      cli: [{ format: "text" }, { format: "text", schema: null }],
      agent: [
        { format: "json", schema: { type: "object" } },
        { format: "json", schema: { type: "object" } },
      ],
      configuration: [{ format: "markdown" }, { format: "markdown", schema: null }],
    },
    fallback: { format: "markdown", schema: null },
  },
  {
    key: "modelProfile",
    decision: "model_profile_id",
    read: (contract) => contract.model_profile_id,
    values: {
      cli: ["from-cli", "from-cli"],
      agent: ["from-agent", "from-agent"],
      configuration: ["from-config", "from-config"],
    },
    fallback: "local/qwen3",
  },
];

describe("buildExecutionContract precedence", () => {
  it.each(precedenceCases)("$key: each layer wins over the ones below it", (testCase) => {
    const layers = testCase.order ?? ["cli", "agent", "configuration", "model"];
    for (let skipped = 0; skipped <= layers.length; skipped++) {
      const active = new Set(layers.slice(skipped));
      const setting = (layer: Layer): ContractSettings => {
        const value = testCase.values[layer];
        return active.has(layer) && value !== undefined ? { [testCase.key]: value[0] } : {};
      };
      const contract = buildExecutionContract(
        factoryInput({
          overrides: setting("cli"),
          agent: { id: "reviewer", systemPrompt: "p", settings: setting("agent") },
          configurationDefaults: setting("configuration"),
          modelTargets: [
            {
              provider: "local",
              model: "qwen3",
              contextWindow: 32_768,
              ...(testCase.key === "contextWindowBufferTokens"
                ? { contextWindowBufferTokens: active.has("model") ? 40 : undefined }
                : { parameters: setting("model") }),
            },
          ],
        }),
      );
      const winner = layers.slice(skipped).find((layer) => testCase.values[layer] !== undefined);
      expect(testCase.read(contract)).toEqual(
        winner === undefined ? testCase.fallback : testCase.values[winner]?.[1],
      );
      expect(contract.decisions[testCase.decision]).toBe(winner ?? "default");
    }
  });

  it("resolves the request parameters of every target, each with its own per-model overrides", () => {
    const contract = buildExecutionContract(
      factoryInput({
        agent: { id: "a", systemPrompt: "", settings: { temperature: 0.7, reasoning: "low" } },
        configurationDefaults: { topP: 0.9 },
        overrides: { seed: 42 },
        modelTargets: [
          { provider: "local", model: "qwen3", parameters: { temperature: 0.1 } },
          // A reasoning model that refuses a temperature: null beats the agent's 0.7 for this target only.
          { provider: "openai", model: "o4-mini", parameters: { temperature: null, reasoning: "high" } },
          { provider: "anthropic", model: "claude", parameters: { reasoningTokens: 2048, seed: 7 } },
        ],
      }),
    );
    const [first, second, third] = contract.model_targets.map((target) => target.request_parameters);
    expect(first).toMatchObject({ temperature: 0.1, top_p: 0.9, seed: 42, reasoning: "low" });
    expect(second).toMatchObject({ temperature: null, top_p: 0.9, seed: 42, reasoning: "high" });
    // The command line beats every per-model value.
    expect(third).toMatchObject({ temperature: 0.7, seed: 42, reasoning: "low", reasoning_tokens: 2048 });
    expect(contract.request_parameters).toEqual(first);
    expect(contract.decisions).toMatchObject({
      temperature: "model",
      top_p: "configuration",
      seed: "cli",
      "model_targets.1.temperature": "model",
      "model_targets.1.reasoning": "model",
      "model_targets.1.top_p": "configuration",
      "model_targets.2.temperature": "agent",
      "model_targets.2.reasoning_tokens": "model",
      "model_targets.2.seed": "cli",
    });
  });

  it("bounds each target's attempts: modelTimeout and modelResponseMaxBytes per provider beat the agent's", () => {
    const contract = buildExecutionContract(
      factoryInput({
        agent: { id: "a", systemPrompt: "", settings: { modelTimeout: 20_000 } },
        configurationDefaults: { modelResponseMaxBytes: 2_000_000 },
        modelTargets: [
          { provider: "local", model: "qwen3", parameters: { modelTimeout: 600_000 } },
          { provider: "openai", model: "gpt", parameters: { modelResponseMaxBytes: 500_000 } },
          { provider: "anthropic", model: "claude" },
        ],
      }),
    );
    expect(
      contract.model_targets.map((target) => [target.model_timeout_ms, target.max_response_bytes]),
    ).toEqual([
      [600_000, 2_000_000],
      [20_000, 500_000],
      [20_000, 2_000_000],
    ]);
    expect(contract.decisions).toMatchObject({
      model_timeout_ms: "model",
      max_response_bytes: "configuration",
      "model_targets.1.model_timeout_ms": "agent",
      "model_targets.1.max_response_bytes": "model",
      "model_targets.2.max_response_bytes": "configuration",
    });
    // They are not request parameters: nothing of them is sent to the provider.
    expect(Object.keys(contract.request_parameters)).not.toContain("model_timeout_ms");
  });

  it("reserves room in the context budget for the largest answer any target may give", () => {
    const contract = buildExecutionContract(
      factoryInput({
        modelTargets: [
          { provider: "a", model: "small", parameters: { maxOutputTokens: 1000 } },
          { provider: "b", model: "large", parameters: { maxOutputTokens: 8000 } },
          { provider: "c", model: "unlimited", parameters: { maxOutputTokens: null } },
        ],
      }),
    );
    expect(contract.model_targets.map((target) => target.request_parameters.max_output_tokens)).toEqual([
      1000,
      8000,
      null,
    ]);
    expect(contract.context_budget.max_output_tokens).toBe(8000);
  });

  it("budgets the context for every fallback target: the smallest window, the largest buffer", () => {
    const targets = [
      {
        provider: "a",
        model: "big",
        contextWindow: 200_000,
        contextWindowBufferTokens: 100,
        tokenizer: "o200k_base",
      },
      { provider: "b", model: "small", contextWindow: 16_000, contextWindowBufferTokens: 300 },
      { provider: "c", model: "unknown" },
    ];
    const contract = buildExecutionContract(factoryInput({ modelTargets: targets }));
    expect(contract.context_budget.context_window).toBe(16_000);
    expect(contract.context_budget.context_window_buffer_tokens).toBe(300);
    expect(contract.decisions).toMatchObject({
      context_window: "model",
      context_window_buffer_tokens: "model",
    });
    expect(contract.model_targets).toMatchObject([
      {
        provider: "a",
        model: "big",
        context_window: 200_000,
        context_window_buffer_tokens: 100,
        tokenizer: "o200k_base",
      },
      {
        provider: "b",
        model: "small",
        context_window: 16_000,
        context_window_buffer_tokens: 300,
        tokenizer: null,
      },
      {
        provider: "c",
        model: "unknown",
        context_window: 128_000,
        context_window_buffer_tokens: 256,
        tokenizer: null,
      },
    ]);
    const agentBuffer = buildExecutionContract(
      factoryInput({
        modelTargets: targets,
        agent: { id: "a", systemPrompt: "", settings: { contextWindowBufferTokens: 50 } },
      }),
    );
    expect(agentBuffer.model_targets.map((target) => target.context_window_buffer_tokens)).toEqual([
      50, 50, 50,
    ]);
    expect(agentBuffer.context_budget.context_window_buffer_tokens).toBe(50);
    expect(agentBuffer.decisions.context_window_buffer_tokens).toBe("agent");
    // A per-model buffer smaller than the default does not make the budget's buffer a per-model decision.
    const defaultWins = buildExecutionContract(
      factoryInput({
        modelTargets: [
          { provider: "a", model: "m", contextWindowBufferTokens: 10 },
          { provider: "b", model: "n" },
        ],
      }),
    );
    expect(defaultWins.context_budget.context_window_buffer_tokens).toBe(256);
    expect(defaultWins.decisions.context_window_buffer_tokens).toBe("default");
  });
});

const budgetVariations: readonly (readonly [string, Partial<Parameters<typeof factoryInput>[0]>])[] = [
  ["maxTurns", { overrides: { maxTurns: 11 } }],
  ["maxRetries", { overrides: { maxRetries: 4 } }],
  ["maxToolCallsPerTurn", { overrides: { maxToolCallsPerTurn: 2 } }],
  ["maxFormatRetries", { overrides: { maxFormatRetries: 0 } }],
  ["maxTokensConsumed", { overrides: { maxTokensConsumed: 100_000 } }],
  ["toolTimeout", { overrides: { toolTimeout: 59_999 } }],
  ["stepTimeout", { overrides: { stepTimeout: 30_000 } }],
  ["totalTimeout", { overrides: { totalTimeout: 600_000 } }],
  ["toolResponseMaxBytes", { overrides: { toolResponseMaxBytes: 12_289 } }],
  ["maxOutputTokens", { overrides: { maxOutputTokens: 4095 } }],
  ["reservedSystemTokens", { overrides: { reservedSystemTokens: 1 } }],
  ["reservedSynthesisTokens", { overrides: { reservedSynthesisTokens: 1023 } }],
  ["contextWindowBufferTokens", { overrides: { contextWindowBufferTokens: 257 } }],
  ["forceSynthesisAtRatio", { overrides: { forceSynthesisAtRatio: 0.85 } }],
  ["contextWindow", { modelTargets: [{ provider: "local", model: "qwen3", contextWindow: 32_767 }] }],
];

const budgetFields = [
  "max_inferences",
  "max_tokens_consumed",
  "max_format_retries",
  "max_retries",
  "max_tool_calls_per_turn",
  "step_timeout_ms",
  "total_timeout_ms",
  "tool_timeout_ms",
  "context_budget.context_window",
  "context_budget.context_window_buffer_tokens",
  "context_budget.max_output_tokens",
  "context_budget.reserved_system",
  "context_budget.reserved_synthesis",
  "context_budget.force_synthesis_at_ratio",
  "tool_output_budget.max_bytes_per_call",
];

function fieldValue(contract: unknown, path: string): unknown {
  return path.split(".").reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], contract);
}

describe("contract hash", () => {
  it("is the same for the same inputs, whatever the id and the time", () => {
    const environment = deterministicEnvironment();
    const first = buildExecutionContract(factoryInput({ environment }));
    environment.advance(86_400_000);
    const second = buildExecutionContract(factoryInput({ environment }));
    const elsewhere = buildExecutionContract(
      factoryInput({ environment: deterministicEnvironment({ start: 0 }) }),
    );
    expect(second.contract_id).not.toBe(first.contract_id);
    expect(second.created_at).not.toBe(first.created_at);
    expect(second.contract_hash).toBe(first.contract_hash);
    expect(elsewhere.contract_hash).toBe(first.contract_hash);
  });

  it("changes when streaming or a per-target override changes", () => {
    const targets = [
      { provider: "local", model: "qwen3", contextWindow: 32_768 },
      { provider: "openai", model: "o4-mini" },
    ];
    const base = buildExecutionContract(factoryInput({ modelTargets: targets })).contract_hash;
    const same = buildExecutionContract(
      factoryInput({ modelTargets: targets.map((target) => ({ ...target })) }),
    );
    expect(same.contract_hash).toBe(base);
    const variants = [
      factoryInput({ modelTargets: targets, overrides: { stream: true } }),
      factoryInput({ modelTargets: [targets[0]!, { ...targets[1]!, parameters: { temperature: 0.5 } }] }),
      factoryInput({ modelTargets: [targets[0]!, { ...targets[1]!, parameters: { reasoning: "high" } }] }),
      factoryInput({
        modelTargets: [targets[0]!, { ...targets[1]!, parameters: { reasoningTokens: 1024 } }],
      }),
    ];
    const hashes = variants.map((input) => buildExecutionContract(input).contract_hash);
    expect(new Set([base, ...hashes]).size).toBe(variants.length + 1);
  });

  it("does not depend on the order the tools were discovered in", () => {
    const forward = buildExecutionContract(factoryInput());
    const reversed = buildExecutionContract(
      factoryInput({ toolManifest: [...factoryInput().toolManifest].reverse() }),
    );
    expect(reversed.contract_hash).toBe(forward.contract_hash);
  });

  it.each(budgetVariations)("changes when %s changes", (_name, change) => {
    const base = buildExecutionContract(factoryInput());
    const changed = buildExecutionContract(factoryInput(change));
    expect(changed.contract_hash).not.toBe(base.contract_hash);
  });

  it("the variations above cover every budget field of the contract", () => {
    const base = buildExecutionContract(factoryInput());
    const covered = new Set<string>();
    for (const [, change] of budgetVariations) {
      const changed = buildExecutionContract(factoryInput(change));
      for (const field of budgetFields) {
        if (JSON.stringify(fieldValue(changed, field)) !== JSON.stringify(fieldValue(base, field)))
          covered.add(field);
      }
    }
    expect([...covered].sort()).toEqual([...budgetFields].sort());
  });

  it("changes when the prompt, a tool's schema, the policy or the parent changes", () => {
    const base = buildExecutionContract(factoryInput()).contract_hash;
    const changedTool = { ...manifestEntry("read_file"), description: "Reads a file, differently" };
    const variants = [
      factoryInput({ agent: { id: "reviewer", systemPrompt: "You review code!", settings: {} } }),
      factoryInput({
        toolManifest: [changedTool, manifestEntry("apply_patch"), manifestEntry("final_report")],
      }),
      factoryInput({ overrides: { toolPolicy: "required" } }),
      factoryInput({ parentContractHash: "b".repeat(64) }),
      factoryInput({ adapterVersion: "protocol-adapter/2" }),
    ];
    const hashes = variants.map((input) => buildExecutionContract(input).contract_hash);
    expect(new Set([base, ...hashes]).size).toBe(variants.length + 1);
  });
});

describe("contract immutability", () => {
  it("is deeply frozen: every mutation throws in strict mode", () => {
    const contract = buildExecutionContract(factoryInput());
    const writable = contract as unknown as Record<string, unknown> & {
      context_budget: Record<string, unknown>;
      tool_manifest: { input_schema: Record<string, unknown> }[];
      decisions: Record<string, unknown>;
      cycle_forbid: unknown[];
    };
    expect(() => {
      writable.max_inferences = 99;
    }).toThrow(TypeError);
    expect(() => {
      writable.context_budget.context_window = 1;
    }).toThrow(TypeError);
    expect(() => {
      writable.tool_manifest.push({ input_schema: {} });
    }).toThrow(TypeError);
    expect(() => {
      (writable.tool_manifest[0] as { input_schema: Record<string, unknown> }).input_schema.type = "string";
    }).toThrow(TypeError);
    expect(() => {
      writable.decisions.max_inferences = "cli";
    }).toThrow(TypeError);
    expect(() => {
      delete writable.contract_hash;
    }).toThrow(TypeError);
    expect(contract.max_inferences).toBe(10);
  });

  it("does not freeze or alias what the caller passed in", () => {
    const input = factoryInput();
    const schema = input.toolManifest[0]?.input_schema as { properties: Record<string, unknown> };
    const contract = buildExecutionContract(input);
    expect(Object.isFrozen(schema)).toBe(false);
    expect(Object.isFrozen(schema.properties)).toBe(false);
    schema.properties.extra = { type: "number" };
    const kept = contract.tool_manifest.find((tool) => tool.name === "read_file")?.input_schema;
    expect(kept?.properties).toEqual({ path: { type: "string" } });
    expect(computeContractHash(contract)).toBe(contract.contract_hash);
  });
});

describe("contract validation", () => {
  it("lists every invalid field by its contract path", () => {
    const error = buildFailure(
      factoryInput({
        overrides: { maxTurns: 0, reservedSystemTokens: -1, forceSynthesisAtRatio: 2 },
        adapterVersion: 7 as unknown as string,
      }),
    );
    expect(error.code).toBe("CONTRACT_INVALID");
    expect([...(error.details.paths as string[])].sort()).toEqual([
      "adapter_version",
      "context_budget.force_synthesis_at_ratio",
      "context_budget.reserved_system",
      "max_inferences",
    ]);
  });

  // Seed 002 §7.6: the retry path is bounded (<= 1) under strict mode.
  it("refuses more than one format retry under strict mode, naming where it came from", () => {
    const error = buildFailure(
      factoryInput({ agent: { id: "a", systemPrompt: "", settings: { strict: true, maxFormatRetries: 2 } } }),
    );
    expect(error.code).toBe("CONTRACT_INVALID");
    expect(error.details.paths).toEqual(["max_format_retries"]);
    expect(error.message).toContain("from agent");
    // One retry, zero, or more without strict: accepted.
    for (const settings of [
      { strict: true, maxFormatRetries: 1 },
      { strict: true, maxFormatRetries: 0 },
      { strict: false, maxFormatRetries: 3 },
    ]) {
      const contract = buildExecutionContract(
        factoryInput({ agent: { id: "a", systemPrompt: "", settings } }),
      );
      expect(contract.max_format_retries).toBe(settings.maxFormatRetries);
    }
  });

  it("refuses a contract without a model target", () => {
    expect(buildFailure(factoryInput({ modelTargets: [] })).details).toMatchObject({
      paths: ["model_targets"],
    });
  });

  it("refuses two tools with one name", () => {
    const error = buildFailure(
      factoryInput({ toolManifest: [manifestEntry("read_file"), manifestEntry("read_file")] }),
    );
    expect(error.code).toBe("CONTRACT_INVALID");
    expect(error.details.paths).toEqual(["tool_manifest.read_file"]);
  });
});
