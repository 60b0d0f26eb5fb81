import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type {
  ClientCapabilities,
  CreateMessageRequest,
  ElicitRequest,
  ListRootsResult,
} from "@modelcontextprotocol/sdk/types.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";

/** A server's `sampling/createMessage` request as Charter serves it: one conversation flattened to text. */
export interface McpSamplingRequest {
  readonly server: string;
  /** The server's system prompt, when it sent one. */
  readonly systemPrompt: string | null;
  /** The server's messages, each as `User:`/`Assistant:` text; images and audio as short descriptions. */
  readonly prompt: string;
  /** The server's `maxTokens`. */
  readonly maxTokens: number;
  readonly signal: AbortSignal;
}

/** What serving a sampling request produced: the model's text and the accounting entries of its model calls. */
export interface McpSamplingAnswer {
  /** `null` when the model gave no answer: the server is sent an error. */
  readonly text: string | null;
  /** `provider/model` of the target that answered. */
  readonly model: string;
  readonly accounting: readonly unknown[];
}

/** Serves sampling requests with the run's own model targets (the runner provides it). */
export type McpSamplingHandler = (request: McpSamplingRequest) => Promise<McpSamplingAnswer>;

/** A server's question for the user (`elicitation/create`, form mode), asked while one of its tools runs. */
export interface McpElicitationRequest {
  readonly server: string;
  /** The id of the tool call that was running. */
  readonly callId: string;
  readonly message: string;
  /** The JSON Schema of the answer the server wants. */
  readonly requestedSchema: Readonly<Record<string, unknown>>;
}

/** The user's answer to a question: content for the form, or a refusal. */
export type McpElicitationAnswer =
  | { readonly action: "accept"; readonly content: Readonly<Record<string, unknown>> }
  | { readonly action: "decline" }
  | { readonly action: "cancel" };

/**
 * Answers a server's question from the answers the user gave (`charter resume --answer`), or returns `null` when
 * there is none yet: the run then stops for one.
 */
export type McpElicitationHandler = (request: McpElicitationRequest) => McpElicitationAnswer | null;

/** What an MCP client offers the servers it talks to, beyond calling their tools. */
export interface McpClientFeatures {
  /**
   * Directories offered as roots (`roots/list`), absolute or relative to the source's `cwd`. Always declared:
   * the run's working directory when the server configures none.
   */
  readonly roots: readonly string[];
  /** Absent: the client does not declare sampling, and a server cannot ask for it. */
  readonly sampling?: (request: CreateMessageRequest["params"], signal: AbortSignal) => Promise<unknown>;
  /** Absent: the client does not declare elicitation. */
  readonly elicitation?: (request: ElicitRequest["params"]) => Promise<unknown>;
}

/** The capabilities a client with these features declares in `initialize`. */
export function mcpClientCapabilities(features: McpClientFeatures): ClientCapabilities {
  return {
    roots: { listChanged: false },
    ...(features.sampling === undefined ? {} : { sampling: {} }),
    // Form mode only: a URL elicitation would send the user to a page Charter cannot show.
    ...(features.elicitation === undefined ? {} : { elicitation: { form: {} } }),
  };
}

/** `roots/list`'s answer: each directory as a `file://` URI, named by its last path segment. */
export function mcpRootsResult(roots: readonly string[], cwd: string): ListRootsResult {
  return {
    roots: roots.map((root) => {
      const path = isAbsolute(root) ? root : resolve(cwd, root);
      const name =
        path
          .split(/[\\/]/)
          .filter((segment) => segment !== "")
          .at(-1) ?? path;
      return { uri: pathToFileURL(path).href, name };
    }),
  };
}

/** Installs the handlers for the requests a server may send this client. */
export function installMcpClientFeatures(client: Client, features: McpClientFeatures, cwd: string): void {
  const roots = mcpRootsResult(features.roots, cwd);
  client.setRequestHandler(ListRootsRequestSchema, () => roots);
  const sampling = features.sampling;
  if (sampling !== undefined) {
    client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => {
      try {
        return (await sampling(request.params, extra.signal)) as never;
      } catch (error) {
        if (error instanceof McpError) throw error;
        throw new McpError(ErrorCode.InternalError, error instanceof Error ? error.message : String(error));
      }
    });
  }
  const elicitation = features.elicitation;
  if (elicitation !== undefined) {
    client.setRequestHandler(
      ElicitRequestSchema,
      async (request) => (await elicitation(request.params)) as never,
    );
  }
}
