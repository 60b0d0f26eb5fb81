import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { configurationSchema } from "../../src/config/configuration-schema.js";
import { parseSetOverrides } from "../../src/config/parse-set-overrides.js";
import { pricingSchema } from "../../src/config/pricing-configuration-schema.js";
import { defaultBaseUrls } from "../../src/config/provider-configuration-schema.js";
import { resolveModelTargets } from "../../src/config/resolve-model-targets.js";

const documentation = readFile(new URL("../../docs/providers.md", import.meta.url), "utf8");

async function jsonBlocks(): Promise<Record<string, unknown>[]> {
  const text = await documentation;
  return [...text.matchAll(/```json\n([\s\S]*?)```/g)].map(
    (match) => JSON.parse(match[1]!) as Record<string, unknown>,
  );
}

describe("docs/providers.md", () => {
  it("configures every provider type in a valid configuration, each model resolvable", async () => {
    const blocks = (await jsonBlocks()).filter((block) => block.providers !== undefined);
    expect(blocks.length).toBeGreaterThan(0);
    const types = new Set<string>();
    for (const block of blocks) {
      const configuration = configurationSchema.parse({ providers: block.providers });
      for (const [name, provider] of Object.entries(configuration.providers)) {
        types.add(provider.type);
        const targets = resolveModelTargets(
          Object.keys(provider.models).map((model) => `${name}/${model}`),
          configuration,
        );
        expect(targets.length).toBe(Object.keys(provider.models).length);
      }
    }
    expect([...types].sort()).toEqual([
      "anthropic",
      "google",
      "ollama",
      "openai",
      "openai-compatible",
      "openrouter",
    ]);
  });

  it("prices models in the pricing format", async () => {
    const blocks = (await jsonBlocks()).filter((block) => block.pricing !== undefined);
    expect(blocks.length).toBeGreaterThan(0);
    for (const block of blocks) expect(pricingSchema.safeParse(block.pricing).success).toBe(true);
  });

  it("lists the default base URLs the code uses", async () => {
    const text = await documentation;
    for (const [type, baseUrl] of Object.entries(defaultBaseUrls)) {
      expect(text).toMatch(
        new RegExp(`\\| \`${type}\` \\|[^\\n]*\\| \`${baseUrl.replaceAll(".", "\\.")}\` \\|`),
      );
    }
  });

  it("shows a --set models example that names two targets", async () => {
    const text = await documentation;
    const assignment = /--set '(models=[^']+)'/.exec(text)?.[1];
    expect(parseSetOverrides([assignment!]).models).toEqual([
      "anthropic/claude-sonnet-4-5",
      "gemini/gemini-2.5-flash",
    ]);
  });
});
