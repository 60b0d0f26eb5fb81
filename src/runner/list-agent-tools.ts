import type { AgentDefinition } from "../config/agent-file.js";
import type { AgentSettings } from "../config/agent-settings-schema.js";
import type { Configuration } from "../config/configuration-schema.js";
import type { ToolManifestEntry } from "../contract/execution-contract.js";
import { systemEnvironment } from "../foundation/environment.js";
import type { AgentSetupOptions } from "./agent-setup-options.js";
import { configureToolIdempotency } from "./configure-tool-idempotency.js";
import { type IdempotencyClass, idempotencyClassOf } from "./guard-tool-calls.js";
import { startToolSources } from "./start-tool-sources.js";

/** One parameter of a tool's input schema, summarised. */
export interface ToolParameterSummary {
  readonly name: string;
  /** The JSON Schema type (`string`, `integer`, `string|null`, `enum`...), or `any` when it names none. */
  readonly type: string;
  readonly required: boolean;
}

/** One tool as the model sees it, with the idempotency class Charter gives it and where that class came from. */
export interface ListedTool {
  /** The name the model calls: `<server>__<tool>` for MCP tools, `rest__<name>` for REST tools. */
  readonly name: string;
  readonly server: string | null;
  readonly description: string;
  readonly parameters: readonly ToolParameterSummary[];
  readonly idempotency: IdempotencyClass;
  /** `configuration` (readOnlyTools, idempotentTools, destructiveTools), `annotation` (the tool's own), `default`. */
  readonly idempotencyFrom: "configuration" | "annotation" | "default";
  /** Why, in words: the setting or annotation that decided, or why the default applies. */
  readonly reason: string;
}

export interface ListedTools {
  readonly tools: readonly ListedTool[];
  /** Entries of the agent's `tools` list that selected no tool of a server or REST tool. */
  readonly unmatched: readonly string[];
}

/**
 * Starts the tool servers an agent names (or, with no agent, every configured MCP server and REST tool), exactly
 * as a run starts them (startToolSources, configureToolIdempotency), lists their tools as the model would see
 * them, and closes them again.
 */
export async function listAgentTools(
  configuration: Configuration,
  agent: AgentDefinition | null,
  options: Pick<AgentSetupOptions, "cwd" | "environment">,
): Promise<ListedTools> {
  const defaults = configuration.defaults;
  const references =
    agent === null ? everyConfiguredSource(configuration) : toolReferencesOf(agent, defaults);
  const settings = idempotencySettingsOf(agent?.settings ?? {}, defaults);
  const started = await startToolSources(references, configuration, {
    cwd: options.cwd ?? process.cwd(),
    environment: options.environment ?? systemEnvironment,
  });
  try {
    const configured = configureToolIdempotency(started.tools, settings);
    const tools = configured.map((tool, index) => {
      const original = started.tools[index]!.manifest;
      return describe(tool.manifest, original, settings);
    });
    return { tools, unmatched: started.unmatched };
  } finally {
    await Promise.allSettled(started.sources.map((source) => source.close()));
  }
}

/** The agent's `tools` list, else the configuration defaults': what a run starts. */
export function toolReferencesOf(agent: AgentDefinition, defaults: AgentSettings): readonly string[] {
  return agent.settings.tools ?? defaults.tools ?? [];
}

function everyConfiguredSource(configuration: Configuration): string[] {
  return [
    ...Object.keys(configuration.mcpServers),
    ...Object.keys(configuration.restTools).map((name) => `rest__${name}`),
  ];
}

/** As a run decides them: the agent file's list, else the configuration defaults'. */
function idempotencySettingsOf(settings: AgentSettings, defaults: AgentSettings) {
  return {
    readOnlyTools: settings.readOnlyTools ?? defaults.readOnlyTools ?? [],
    idempotentTools: settings.idempotentTools ?? defaults.idempotentTools ?? [],
    destructiveTools: settings.destructiveTools ?? defaults.destructiveTools ?? [],
  };
}

const settingOf: Record<Exclude<IdempotencyClass, "unknown">, string> = {
  read_only: "readOnlyTools",
  idempotent: "idempotentTools",
  destructive: "destructiveTools",
};

const hintOf: Record<Exclude<IdempotencyClass, "unknown">, string> = {
  read_only: "readOnlyHint",
  idempotent: "idempotentHint",
  destructive: "destructiveHint",
};

function describe(
  manifest: ToolManifestEntry,
  original: ToolManifestEntry,
  settings: ReturnType<typeof idempotencySettingsOf>,
): ListedTool {
  const idempotency = idempotencyClassOf(manifest, new Set());
  const declared = idempotencyClassOf(original, new Set());
  const server = manifest.source.server;
  const base = {
    name: manifest.name,
    server,
    description: manifest.description,
    parameters: parametersOf(manifest.input_schema),
    idempotency,
  };
  if (idempotency !== "unknown") {
    const setting = settingOf[idempotency];
    const list = settings[setting as keyof typeof settings];
    const configuredBy = [manifest.name, ...(server !== null ? [server] : [])].find((name) =>
      list.includes(name),
    );
    if (configuredBy !== undefined) {
      return {
        ...base,
        idempotencyFrom: "configuration",
        reason: `configuration: ${setting} names ${configuredBy}${declared !== idempotency ? ` (the tool declares ${declared})` : ""}`,
      };
    }
    const origin =
      manifest.source.kind === "mcp" ? "annotation from the server" : "annotation from its source";
    return { ...base, idempotencyFrom: "annotation", reason: `${origin}: ${hintOf[idempotency]}` };
  }
  const declaredHints = manifest.annotations !== null && Object.keys(manifest.annotations).length > 0;
  return {
    ...base,
    idempotencyFrom: "default",
    reason: `default: ${declaredHints ? "its annotations declare it neither read-only, idempotent nor destructive" : "it has no annotations"} and no configuration names it; never repeated automatically`,
  };
}

function parametersOf(schema: Readonly<Record<string, unknown>>): ToolParameterSummary[] {
  const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    type: typeOf(property),
    required: required.has(name),
  }));
}

function typeOf(property: Record<string, unknown>): string {
  if (Array.isArray(property.type)) return property.type.join("|");
  if (typeof property.type === "string") {
    if (property.type === "array" && typeof property.items === "object" && property.items !== null)
      return `${typeOf(property.items as Record<string, unknown>)}[]`;
    return property.type;
  }
  if (Array.isArray(property.enum)) return "enum";
  for (const key of ["anyOf", "oneOf"]) {
    const options = property[key];
    if (Array.isArray(options))
      return options.map((option) => typeOf(option as Record<string, unknown>)).join("|");
  }
  return "any";
}
