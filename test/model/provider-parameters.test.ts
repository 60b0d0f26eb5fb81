import { afterEach, describe, expect, it } from "vitest";
import type { RequestParameters } from "../../src/contract/execution-contract.js";
import {
  type ScriptedProviderServer,
  startScriptedProviderServer,
} from "../../src/testing/scripted-provider-server.js";
import type { ScriptedWireFormatName } from "../../src/testing/scripted-wire-format.js";
import { clientFor, nullParameters, type ProviderCase, providerCases, request } from "./provider-fixtures.js";

let server: ScriptedProviderServer | null = null;

afterEach(async () => {
  await server?.close();
  server = null;
});

type Parameter = keyof RequestParameters;
type WirePath = readonly string[];

/** Where each provider's wire format carries each sampling parameter, or the feature name its package reports. */
interface ParameterMapping {
  readonly sent: readonly (readonly [Parameter, RequestParameters[Parameter], WirePath])[];
  /** A parameter the API requires: when it is null, the provider package sends the model's own limit. */
  readonly required?: Parameter;
  /** Parameters the provider's API has no field for: reported as warnings, never silently dropped. */
  readonly unsupported: readonly (readonly [Parameter, RequestParameters[Parameter], string])[];
}

const chatCompletions: ParameterMapping = {
  sent: [
    ["temperature", 0.5, ["temperature"]],
    ["top_p", 0.9, ["top_p"]],
    ["max_output_tokens", 256, ["max_tokens"]],
    ["frequency_penalty", 0.25, ["frequency_penalty"]],
    ["presence_penalty", -0.5, ["presence_penalty"]],
    ["seed", 1234, ["seed"]],
    ["stop_sequences", ["END", "STOP"], ["stop"]],
  ],
  unsupported: [["top_k", 40, "topK"]],
};

const mappings: Readonly<Record<string, ParameterMapping>> = {
  "openai (chat)": chatCompletions,
  "openai (responses)": {
    sent: [
      ["temperature", 0.5, ["temperature"]],
      ["top_p", 0.9, ["top_p"]],
      ["max_output_tokens", 256, ["max_output_tokens"]],
    ],
    unsupported: [
      ["top_k", 40, "topK"],
      ["frequency_penalty", 0.25, "frequencyPenalty"],
      ["presence_penalty", -0.5, "presencePenalty"],
      ["seed", 1234, "seed"],
      ["stop_sequences", ["END"], "stopSequences"],
    ],
  },
  "openai-compatible": {
    sent: [...chatCompletions.sent, ["top_k", 40, ["top_k"]]],
    unsupported: [],
  },
  anthropic: {
    sent: [
      ["temperature", 0.5, ["temperature"]],
      ["top_p", 0.9, ["top_p"]],
      ["top_k", 40, ["top_k"]],
      ["max_output_tokens", 256, ["max_tokens"]],
      ["stop_sequences", ["END", "STOP"], ["stop_sequences"]],
    ],
    required: "max_output_tokens",
    unsupported: [
      ["frequency_penalty", 0.25, "frequencyPenalty"],
      ["presence_penalty", -0.5, "presencePenalty"],
      ["seed", 1234, "seed"],
    ],
  },
  google: {
    sent: [
      ["temperature", 0.5, ["generationConfig", "temperature"]],
      ["top_p", 0.9, ["generationConfig", "topP"]],
      ["top_k", 40, ["generationConfig", "topK"]],
      ["max_output_tokens", 256, ["generationConfig", "maxOutputTokens"]],
      ["frequency_penalty", 0.25, ["generationConfig", "frequencyPenalty"]],
      ["presence_penalty", -0.5, ["generationConfig", "presencePenalty"]],
      ["seed", 1234, ["generationConfig", "seed"]],
      ["stop_sequences", ["END", "STOP"], ["generationConfig", "stopSequences"]],
    ],
    unsupported: [],
  },
  ollama: {
    // Ollama reads sampling parameters only from `options`; top-level fields would be ignored.
    sent: [
      ["temperature", 0.5, ["options", "temperature"]],
      ["top_p", 0.9, ["options", "top_p"]],
      ["top_k", 40, ["options", "top_k"]],
      ["max_output_tokens", 256, ["options", "num_predict"]],
      ["seed", 1234, ["options", "seed"]],
      ["stop_sequences", ["END", "STOP"], ["options", "stop"]],
    ],
    unsupported: [
      ["frequency_penalty", 0.25, "frequencyPenalty"],
      ["presence_penalty", -0.5, "presencePenalty"],
    ],
  },
  openrouter: {
    sent: [...chatCompletions.sent, ["top_k", 40, ["top_k"]]],
    unsupported: [],
  },
};

/** Where each provider carries `reasoning` and `reasoning_tokens`, and what it sends for each. */
const reasoningOnWire: Readonly<
  Record<
    string,
    { readonly high: unknown; readonly none: unknown; readonly budget: unknown; readonly at: WirePath }
  >
> = {
  "openai (chat)": { at: ["reasoning_effort"], high: "high", none: "none", budget: undefined },
  "openai (responses)": {
    at: ["reasoning"],
    high: expect.objectContaining({ effort: "high" }),
    none: { effort: "none" },
    budget: undefined,
  },
  "openai-compatible": { at: ["reasoning_effort"], high: "high", none: "none", budget: undefined },
  anthropic: {
    at: ["thinking"],
    // A budget the package derives from the level and the model's output limit.
    high: { type: "enabled", budget_tokens: expect.any(Number) },
    none: { type: "disabled" },
    budget: { type: "enabled", budget_tokens: 3000 },
  },
  google: {
    at: ["generationConfig", "thinkingConfig"],
    high: { thinkingLevel: "high", includeThoughts: true },
    none: { thinkingLevel: "minimal" },
    budget: { thinkingBudget: 3000, includeThoughts: true },
  },
  ollama: { at: ["think"], high: true, none: false, budget: false },
  openrouter: {
    at: ["reasoning"],
    high: { effort: "high" },
    none: { effort: "none" },
    budget: { max_tokens: 3000 },
  },
};

function at(body: unknown, path: WirePath): unknown {
  return path.reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], body);
}

async function wireBodies(
  providerCase: ProviderCase,
  parameterSets: readonly Partial<RequestParameters>[],
): Promise<{ bodies: unknown[]; warnings: (readonly string[] | undefined)[] }> {
  server = await startScriptedProviderServer({
    script: parameterSets.map(() => ({ kind: "text", text: "ok" })),
  });
  const client = clientFor(providerCase, server);
  const warnings: (readonly string[] | undefined)[] = [];
  for (const parameters of parameterSets) {
    const response = await client.generate(request({ parameters: { ...nullParameters, ...parameters } }));
    warnings.push(response.warnings);
  }
  return { bodies: server.requests.map((recorded) => recorded.body), warnings };
}

describe.each(providerCases)("request parameters on the wire: $label", (providerCase) => {
  const mapping = mappings[providerCase.label]!;
  const wire: ScriptedWireFormatName = providerCase.wire;

  it.each(mapping.sent)(
    `sends %s as it is, where the ${wire} format carries it`,
    async (parameter, value, path) => {
      const { bodies, warnings } = await wireBodies(providerCase, [{ [parameter]: value }]);
      expect(at(bodies[0], path)).toEqual(value);
      for (const [other, , otherPath] of mapping.sent) {
        if (other !== parameter && other !== mapping.required)
          expect(at(bodies[0], otherPath)).toBeUndefined();
      }
      expect(warnings[0] ?? []).not.toContainEqual(expect.stringContaining(parameter));
    },
  );

  it("sends zero values, which are not null", async () => {
    const zeroes = mapping.sent.filter(([parameter]) => parameter === "temperature" || parameter === "seed");
    const { bodies } = await wireBodies(providerCase, [
      Object.fromEntries(zeroes.map(([parameter]) => [parameter, 0])),
    ]);
    for (const [, , path] of zeroes) expect(at(bodies[0], path)).toBe(0);
  });

  it("sends no parameter that is null", async () => {
    const { bodies } = await wireBodies(providerCase, [{}]);
    for (const [parameter, , path] of mapping.sent) {
      if (parameter === mapping.required) expect(at(bodies[0], path)).toEqual(expect.any(Number));
      else expect(at(bodies[0], path)).toBeUndefined();
    }
  });

  if (mapping.unsupported.length > 0) {
    it.each(mapping.unsupported)(
      "reports a parameter the API cannot take (%s) as a warning instead of dropping it silently",
      async (parameter, value, feature) => {
        const { warnings } = await wireBodies(providerCase, [{ [parameter]: value }]);
        expect(warnings[0]).toContainEqual(expect.stringContaining(feature));
      },
    );
  }

  it("maps reasoning and reasoning_tokens onto the provider's own option", async () => {
    const expected = reasoningOnWire[providerCase.label]!;
    const reasoningCase = { ...providerCase, model: providerCase.reasoningModel ?? providerCase.model };
    const { bodies } = await wireBodies(reasoningCase, [
      { reasoning: "high" },
      { reasoning: "none" },
      { reasoning_tokens: 3000 },
      {},
    ]);
    expect(at(bodies[0], expected.at)).toEqual(expected.high);
    expect(at(bodies[1], expected.at)).toEqual(expected.none);
    expect(at(bodies[2], expected.at)).toEqual(expected.budget);
    // Without either, nothing is sent, except Ollama's package, which always sends its on/off flag.
    expect(at(bodies[3], expected.at)).toEqual(providerCase.type === "ollama" ? false : undefined);
  });
});
