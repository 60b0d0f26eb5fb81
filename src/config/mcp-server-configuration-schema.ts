import { z } from "zod";
import { parseDuration } from "./parse-duration.js";

/** A duration as configuration writes it (milliseconds, or "500ms", "5s", "2m", "1h"), read as milliseconds. */
export const durationSchema = z
  .union([z.number(), z.string()], {
    error: 'expected a duration: milliseconds, or a string such as "500ms", "5s", "2m", "1h"',
  })
  .transform((value, context) => {
    const milliseconds = parseDuration(value);
    if (milliseconds === undefined) {
      context.addIssue({
        code: "custom",
        message: `${JSON.stringify(value)} is not a positive duration (milliseconds, or "500ms", "5s", "2m", "1h")`,
      });
      return z.NEVER;
    }
    return milliseconds;
  });

const toolPatternsSchema = z.array(z.string().min(1));

const reconnectSchema = z
  .object({
    attempts: z.number().int().positive().optional(),
    initialDelay: durationSchema.optional(),
    maxDelay: durationSchema.optional(),
  })
  .strict();

const remoteUrlSchema = z.string().refine(
  (value) => {
    if (!URL.canParse(value)) return false;
    const protocol = new URL(value).protocol;
    return protocol === "http:" || protocol === "https:";
  },
  { error: "expected an absolute http:// or https:// URL" },
);

/**
 * Every key of `mcpServers.<name>`, each optional so that a higher layer may override one field. Which keys a
 * server needs depends on its `type` and is checked on the merged configuration (`mcpServerSchema`).
 */
export const mcpServerShape = {
  /** Default: "stdio" when a `command` is given, "http" when a `url` is. */
  type: z.enum(["stdio", "http", "sse"]).optional(),
  // stdio
  command: z.string().min(1).optional(),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().min(1).optional(),
  // http and sse
  url: remoteUrlSchema.optional(),
  headers: z.record(z.string(), z.string()).optional(),
  // any type
  toolsAllowed: toolPatternsSchema.optional(),
  toolsDenied: toolPatternsSchema.optional(),
  requestTimeout: durationSchema.optional(),
  reconnect: reconnectSchema.optional(),
  queue: z.string().min(1).optional(),
  roots: z.array(z.string().min(1)).optional(),
};

const stdioOnlyKeys = ["command", "args", "env", "cwd"] as const;
const remoteOnlyKeys = ["url", "headers"] as const;

type McpServerInput = z.output<z.ZodObject<typeof mcpServerShape>>;

function typeOf(server: McpServerInput): "stdio" | "http" | "sse" {
  return server.type ?? (server.url !== undefined && server.command === undefined ? "http" : "stdio");
}

/** The keys every type shares, only when set: an absent key keeps the source's default. */
function commonKeys(server: McpServerInput) {
  return {
    ...(server.toolsAllowed === undefined ? {} : { toolsAllowed: server.toolsAllowed }),
    ...(server.toolsDenied === undefined ? {} : { toolsDenied: server.toolsDenied }),
    ...(server.requestTimeout === undefined ? {} : { requestTimeout: server.requestTimeout }),
    ...(server.reconnect === undefined ? {} : { reconnect: server.reconnect }),
    ...(server.queue === undefined ? {} : { queue: server.queue }),
    ...(server.roots === undefined ? {} : { roots: server.roots }),
  };
}

/**
 * One MCP server of the merged configuration, normalised to what `createMcpSource` takes: a `stdio` server
 * needs a `command`, an `http` or `sse` server a `url`, and keys of the other kind are refused.
 */
export const mcpServerSchema = z
  .object(mcpServerShape)
  .strict()
  .superRefine((server, context) => {
    const type = typeOf(server);
    const required = type === "stdio" ? "command" : "url";
    if (server[required] === undefined) {
      context.addIssue({
        code: "custom",
        path: [required],
        message: `a server of type "${type}" needs a ${required}`,
      });
    }
    const foreign = type === "stdio" ? remoteOnlyKeys : stdioOnlyKeys;
    for (const key of foreign) {
      if (server[key] !== undefined) {
        context.addIssue({
          code: "custom",
          path: [key],
          message: `"${key}" does not apply to a server of type "${type}"`,
        });
      }
    }
    if (type === "stdio" && server.reconnect !== undefined) {
      context.addIssue({
        code: "custom",
        path: ["reconnect"],
        message: 'a stdio server is not reconnected; "reconnect" applies to http and sse servers',
      });
    }
  })
  .transform((server) => {
    const type = typeOf(server);
    if (type === "stdio") {
      return {
        type,
        command: server.command as string,
        args: server.args ?? [],
        env: server.env ?? {},
        cwd: server.cwd ?? null,
        ...commonKeys(server),
      };
    }
    return { type, url: server.url as string, headers: server.headers ?? {}, ...commonKeys(server) };
  });

export type McpServerConfiguration = z.output<typeof mcpServerSchema>;
