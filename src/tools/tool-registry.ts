import type { ToolManifestEntry } from "../contract/execution-contract.js";
import { CharterError } from "../foundation/charter-error.js";
import type { RegisteredTool } from "./tool-definition.js";

/**
 * A tool as a model request lists it. Structurally the model layer's `ModelToolSpec`; declared here because
 * the tools layer sits below the model layer and must not import it.
 */
export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
}

function describeSource(tool: RegisteredTool): string {
  const { kind, server, tool: original } = tool.manifest.source;
  return server === null ? `${kind} tool '${original}'` : `${kind} server '${server}' (tool '${original}')`;
}

/**
 * The tools of one run, by the name the model calls them. Listings are sorted by name, so the manifest
 * (hashed into the contract) and the tool list sent to the model do not depend on start-up order.
 */
export class ToolRegistry {
  readonly #tools = new Map<string, RegisteredTool>();
  #sortedNames: readonly string[] | null = null;
  #manifest: readonly ToolManifestEntry[] | null = null;
  #specs: readonly ToolSpec[] | null = null;

  constructor(tools: Iterable<RegisteredTool> = []) {
    for (const tool of tools) this.register(tool);
  }

  /** Adds a tool; a name already taken raises CONFIGURATION_INVALID naming both sources. */
  register(tool: RegisteredTool): void {
    const name = tool.manifest.name;
    const existing = this.#tools.get(name);
    if (existing !== undefined) {
      const sources = [describeSource(existing), describeSource(tool)];
      throw new CharterError(
        "CONFIGURATION_INVALID",
        `tool name '${name}' is provided twice: by ${sources[0]} and by ${sources[1]}`,
        { details: { tool: name, sources } },
      );
    }
    this.#tools.set(name, tool);
    this.#sortedNames = null;
    this.#manifest = null;
    this.#specs = null;
  }

  registerAll(tools: Iterable<RegisteredTool>): void {
    for (const tool of tools) this.register(tool);
  }

  get(name: string): RegisteredTool | undefined {
    return this.#tools.get(name);
  }

  has(name: string): boolean {
    return this.#tools.has(name);
  }

  get size(): number {
    return this.#tools.size;
  }

  /** The exposed names, sorted. */
  names(): readonly string[] {
    this.#sortedNames ??= Object.freeze([...this.#tools.keys()].sort());
    return this.#sortedNames;
  }

  /** Every tool's manifest entry, sorted by name: what the contract hashes. */
  manifest(): readonly ToolManifestEntry[] {
    this.#manifest ??= Object.freeze(this.names().map((name) => this.#tools.get(name)!.manifest));
    return this.#manifest;
  }

  /** The tools as a model request lists them, sorted by name; only the given names when `names` is passed. */
  modelToolSpecs(names?: readonly string[]): readonly ToolSpec[] {
    this.#specs ??= Object.freeze(
      this.manifest().map((entry) =>
        Object.freeze({ name: entry.name, description: entry.description, inputSchema: entry.input_schema }),
      ),
    );
    if (names === undefined) return this.#specs;
    const wanted = new Set(names);
    return this.#specs.filter((spec) => wanted.has(spec.name));
  }
}
