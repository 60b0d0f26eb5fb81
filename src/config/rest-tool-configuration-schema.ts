import { z } from "zod";
import { durationSchema } from "./mcp-server-configuration-schema.js";

/** The HTTP methods a REST tool may use; written in any case, read in upper case. */
export const restToolMethods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"] as const;

/**
 * A REST tool's name (the key under `restTools`): the model sees it as `rest__<name>`, and providers accept
 * only letters, digits, `_` and `-` in tool names, at most 64 characters with the prefix.
 */
export const restToolNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,58}$/, { error: "a REST tool name is 1-58 letters, digits, _ or -" });

const methodSchema = z
  .string()
  .transform((method) => method.toUpperCase())
  .pipe(z.enum(restToolMethods, { error: `expected one of ${restToolMethods.join(", ")}` }));

// `${parameters.x}` placeholders are filled per call, so the URL is checked with each of them standing in
// for a plain value.
const templatedUrlSchema = z.string().refine(
  (value) => {
    const sample = value.replace(/\$\{parameters\.[^}]*\}/g, "x");
    if (!URL.canParse(sample)) return false;
    const protocol = new URL(sample).protocol;
    return protocol === "http:" || protocol === "https:";
  },
  {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the message shows a REST placeholder, not a template.
    error: "expected an absolute http:// or https:// URL (${parameters.x} placeholders allowed)",
  },
);

/**
 * Every key of `restTools.<name>`, each optional so that a higher layer may override one field; the merged
 * configuration requires `method` and `url` (`restToolSchema`). `${parameters.x}` placeholders in `url`,
 * `headers` and `bodyTemplate` are left exactly as written when configuration is loaded.
 */
export const restToolShape = {
  method: methodSchema.optional(),
  url: templatedUrlSchema.optional(),
  headers: z.record(z.string(), z.string()).optional(),
  /** A JSON Schema of the tool's parameters (an object); the model's arguments are validated against it. */
  parametersSchema: z.record(z.string(), z.unknown()).optional(),
  /** The JSON body, with `${parameters.x}` placeholders in its string values; absent sends no body. */
  bodyTemplate: z.unknown().optional(),
  description: z.string().optional(),
  timeout: durationSchema.optional(),
  queue: z.string().min(1).optional(),
};

/** One REST tool of the merged configuration, in the shape `createRestToolSource` takes. */
export const restToolSchema = z
  .object(restToolShape)
  .strict()
  .superRefine((tool, context) => {
    for (const key of ["method", "url"] as const) {
      if (tool[key] === undefined) {
        context.addIssue({ code: "custom", path: [key], message: `a REST tool needs a ${key}` });
      }
    }
    const hasBody = tool.bodyTemplate !== undefined && tool.bodyTemplate !== null;
    if (hasBody && (tool.method === "GET" || tool.method === "HEAD")) {
      context.addIssue({
        code: "custom",
        path: ["bodyTemplate"],
        message: `a ${tool.method} request has no body`,
      });
    }
    if (tool.parametersSchema !== undefined && tool.parametersSchema.type !== "object") {
      context.addIssue({
        code: "custom",
        path: ["parametersSchema", "type"],
        message: 'the parameters schema must describe an object (type: "object")',
      });
    }
  })
  .transform((tool) => ({
    method: tool.method as (typeof restToolMethods)[number],
    url: tool.url as string,
    headers: tool.headers ?? {},
    ...(tool.parametersSchema === undefined ? {} : { parametersSchema: tool.parametersSchema }),
    ...(tool.bodyTemplate === undefined || tool.bodyTemplate === null
      ? {}
      : { bodyTemplate: tool.bodyTemplate }),
    ...(tool.description === undefined ? {} : { description: tool.description }),
    ...(tool.timeout === undefined ? {} : { timeout: tool.timeout }),
    ...(tool.queue === undefined ? {} : { queue: tool.queue }),
  }));

export type RestToolConfiguration = z.output<typeof restToolSchema>;
