import type { FetchFunction } from "@ai-sdk/provider-utils";
import type { RuntimeEnvironment } from "../../foundation/environment.js";
import type { ModelClient } from "../model-client.js";
import { createModelClient } from "./create-model-client.js";

export interface OpenAICompatibleModelClientOptions {
  /** The provider's name in configuration, as in `provider/model`. */
  readonly providerName: string;
  /** For example `http://127.0.0.1:8000/v1`. */
  readonly baseUrl: string;
  readonly apiKey?: string;
  readonly model: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly fetch?: FetchFunction;
  /** Client-side timeout of one call; defaults to five minutes. */
  readonly timeoutMs?: number;
  /** The clock used for Retry-After dates; defaults to the system environment. */
  readonly environment?: RuntimeEnvironment;
}

/** A client for any OpenAI-compatible Chat Completions server: `createModelClient` with type `openai-compatible`. */
export function createOpenAICompatibleModelClient(options: OpenAICompatibleModelClientOptions): ModelClient {
  return createModelClient(
    {
      provider: options.providerName,
      model: options.model,
      connection: {
        type: "openai-compatible",
        baseUrl: options.baseUrl,
        apiKey: options.apiKey ?? null,
        headers: options.headers ?? {},
      },
    },
    {
      ...(options.environment === undefined ? {} : { environment: options.environment }),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    },
  );
}
