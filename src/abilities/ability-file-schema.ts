import { z } from "zod";
import { abilityIdPattern } from "../config/agent-settings-schema.js";

const keyword = z.string().trim().min(1, { error: "a keyword cannot be empty" });

/** An ability file's frontmatter. Strict: an unknown key is an error, never silently ignored. */
export const abilityFrontmatterSchema = z
  .object({
    id: z.string({ error: "every ability names its id" }).regex(abilityIdPattern, {
      error: "expected lowercase letters, digits and hyphens, for example sql-style",
    }),
    keywords: z
      .union([keyword, z.array(keyword)], { error: "expected a keyword or a list of keywords" })
      .transform((value) => (typeof value === "string" ? [value] : value))
      .default([]),
    description: z.string().optional(),
  })
  .strict();

export type AbilityFrontmatter = z.output<typeof abilityFrontmatterSchema>;
