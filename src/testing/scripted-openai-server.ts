import {
  type ScriptedProviderServer,
  type ScriptedProviderServerOptions,
  startScriptedProviderServer,
} from "./scripted-provider-server.js";

export type { RecordedRequest, ScriptedResponder } from "./scripted-provider-server.js";

export type ScriptedOpenAIServerOptions = ScriptedProviderServerOptions;
export type ScriptedOpenAIServer = ScriptedProviderServer;

/**
 * The scripted provider server, named for its first wire format: `baseUrl` is the OpenAI-compatible
 * `http://127.0.0.1:PORT/v1`; it answers every other provider's wire format too (see `baseUrls`).
 */
export function startScriptedOpenAIServer(
  options: ScriptedOpenAIServerOptions,
): Promise<ScriptedOpenAIServer> {
  return startScriptedProviderServer(options);
}
