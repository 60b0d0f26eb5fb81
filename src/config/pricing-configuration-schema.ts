import { z } from "zod";

const usdPerMillionTokens = z.number().nonnegative();

const modelPricingShape = {
  /** Input tokens not read from or written to a cache. */
  input: usdPerMillionTokens,
  output: usdPerMillionTokens,
  /** Input tokens read from the provider's prompt cache; priced as `input` when absent. */
  cacheRead: usdPerMillionTokens.optional(),
  /** Input tokens written to the provider's prompt cache; priced as `input` when absent. */
  cacheWrite: usdPerMillionTokens.optional(),
};

/** The price of one model in USD per million tokens: `pricing.<provider>.<model>`. */
export const modelPricingSchema = z.object(modelPricingShape).strict();

/** `pricing` in one configuration file: a higher layer may set a single price of a model defined lower down. */
export const pricingLayerSchema = z.record(
  z.string().min(1),
  z.record(z.string().min(1), z.object(modelPricingShape).partial().strict()),
);

/** `pricing` after merging every layer: each model priced completely. */
export const pricingSchema = z.record(z.string().min(1), z.record(z.string().min(1), modelPricingSchema));

export type ModelPricingConfiguration = z.output<typeof modelPricingSchema>;
export type PricingConfiguration = z.output<typeof pricingSchema>;

/** The price of `provider/model`, or undefined when the configuration has none (its cost is then unknown). */
export function findModelPricing(
  pricing: PricingConfiguration | undefined,
  provider: string,
  model: string,
): ModelPricingConfiguration | undefined {
  if (pricing === undefined || !Object.hasOwn(pricing, provider)) return undefined;
  const models = pricing[provider]!;
  return Object.hasOwn(models, model) ? models[model] : undefined;
}
