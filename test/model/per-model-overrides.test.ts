import { afterEach, describe, expect, it } from "vitest";
import { configurationSchema } from "../../src/config/configuration-schema.js";
import { resolveModelTargets } from "../../src/config/resolve-model-targets.js";
import { buildExecutionContract } from "../../src/contract/contract-factory.js";
import { deterministicEnvironment } from "../../src/foundation/environment.js";
import { createModelClient } from "../../src/model/providers/create-model-client.js";
import {
  type ScriptedProviderServer,
  startScriptedProviderServer,
} from "../../src/testing/scripted-provider-server.js";
import { providerCases, request, temperatureAndLimitPaths, valueAt } from "./provider-fixtures.js";

let server: ScriptedProviderServer | null = null;

afterEach(async () => {
  await server?.close();
  server = null;
});

/**
 * Seed 000 §10 lists "config ignored" as a contract violation: `temperature: 0.5` configured, 1.0 received.
 * These tests go the whole way, configuration to contract to the bytes on the wire, for every provider type.
 */
describe.each(providerCases)("per-model configuration reaches the wire: $label", (providerCase) => {
  async function wireOf(
    models: Record<string, Record<string, unknown>>,
    providerSettings: Record<string, unknown> = {},
  ): Promise<unknown[]> {
    const modelNames = Object.keys(models);
    server = await startScriptedProviderServer({
      script: modelNames.map(() => ({ kind: "text", text: "ok" })),
    });
    const configuration = configurationSchema.parse({
      providers: {
        scripted: {
          type: providerCase.type,
          ...(providerCase.mode === undefined ? {} : { mode: providerCase.mode }),
          baseUrl: server.baseUrls[providerCase.wire],
          apiKey: "sk-test",
          ...providerSettings,
          models,
        },
      },
    });
    const targets = resolveModelTargets(
      modelNames.map((name) => `scripted/${name}`),
      configuration,
    );
    const environment = deterministicEnvironment();
    const contract = buildExecutionContract({
      // The agent asks for a temperature and a limit of its own; per-model configuration must win.
      agent: { id: "agent", systemPrompt: "s", settings: { temperature: 0.9, maxOutputTokens: 100 } },
      configurationDefaults: { temperature: 0.8 },
      overrides: {},
      modelTargets: targets,
      toolManifest: [],
      parentContractHash: null,
      adapterVersion: "adapter",
      environment,
    });
    for (const [index, target] of targets.entries()) {
      const client = createModelClient(target, { environment });
      await client.generate(request({ parameters: contract.model_targets[index]!.request_parameters }));
    }
    return server.requests.map((recorded) => recorded.body);
  }

  const paths = temperatureAndLimitPaths[providerCase.label]!;
  // Model names the provider packages know nothing special about (see the fixtures).
  const model = (suffix: string) => `${providerCase.model}-${suffix}`.replace("vendor/", "vendor-");

  it("each target gets its own model's values, which beat the agent's", async () => {
    const bodies = await wireOf({
      [model("a")]: { temperature: 0.2, maxOutputTokens: 300 },
      [model("b")]: { temperature: 0.4 },
      [model("c")]: {},
    });
    expect(bodies.map((body) => valueAt(body, paths.temperature))).toEqual([0.2, 0.4, 0.9]);
    expect(bodies.map((body) => valueAt(body, paths.maxOutputTokens))).toEqual([300, 100, 100]);
  });

  it("a model's null is honoured: the parameter is not sent, whatever the agent asks", async () => {
    const bodies = await wireOf({ [model("reasoner")]: { temperature: null, maxOutputTokens: 200 } });
    expect(valueAt(bodies[0], paths.temperature)).toBeUndefined();
    expect(valueAt(bodies[0], paths.maxOutputTokens)).toBe(200);
  });

  it("a setting on the provider applies to its models unless a model sets its own", async () => {
    const bodies = await wireOf(
      { [model("x")]: {}, [model("y")]: { temperature: 0.3 } },
      { temperature: 0.1, maxOutputTokens: 250 },
    );
    expect(bodies.map((body) => valueAt(body, paths.temperature))).toEqual([0.1, 0.3]);
    expect(bodies.map((body) => valueAt(body, paths.maxOutputTokens))).toEqual([250, 250]);
  });
});
