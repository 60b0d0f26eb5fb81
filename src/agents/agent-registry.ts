import type { AgentDefinition } from "../config/agent-file.js";
import { describeSchemaIssues, schemaIssues } from "../config/schema-issues.js";
import { CharterError } from "../foundation/charter-error.js";
import { deepFreeze } from "../foundation/deep-freeze.js";
import { nearestName } from "../foundation/nearest-name.js";
import { agentDefinitionSchema } from "./agent-definition-schema.js";
import { standardAgent, standardAgentId } from "./standard-agent.js";

/**
 * The agents a team keeps, by id (seed 003 INV-AGT-001/002). Every definition is validated before it is
 * registered, so the registry never holds a partial profile; ids are unique, and creating an agent (`register`)
 * is distinct from replacing one (`update`). The built-in `standard` agent is always there and enabled: a
 * definition with id `standard` replaces it once, and a disabled one is refused.
 */
export class AgentRegistry {
  private readonly agents = new Map<string, AgentDefinition>();

  /** `directory` stands in for the built-in agent's folder: the working directory of whoever uses the registry. */
  constructor(directory: string = process.cwd()) {
    this.agents.set(standardAgentId, standardAgent(directory));
  }

  /** Adds a new agent. Throws AGENT_PROFILE_INVALID when it does not validate, AGENT_ID_DUPLICATE when its id exists. */
  register(definition: AgentDefinition): void {
    const valid = validatedDefinition(definition);
    const existing = this.agents.get(valid.id);
    // The built-in standard agent is a default, not a registration: one definition may take its place.
    if (existing !== undefined && !existing.builtIn) {
      throw new CharterError(
        "AGENT_ID_DUPLICATE",
        `agent id '${valid.id}' is defined twice: by ${existing.path} and by ${valid.path} (ids must be unique; set a different id in one of them)`,
        { details: { file: valid.path, key: "id", id: valid.id, files: [existing.path, valid.path] } },
      );
    }
    this.agents.set(valid.id, valid);
  }

  /** Replaces an agent. Throws AGENT_PROFILE_INVALID when it does not validate, AGENT_NOT_FOUND when its id is new. */
  update(definition: AgentDefinition): void {
    const valid = validatedDefinition(definition);
    if (!this.agents.has(valid.id)) throw this.notFound(valid.id, "update");
    this.agents.set(valid.id, valid);
  }

  has(id: string): boolean {
    return this.agents.has(id);
  }

  get(id: string): AgentDefinition | undefined {
    return this.agents.get(id);
  }

  /**
   * The agent with this id, to run or delegate to: AGENT_NOT_FOUND (naming the nearest id) when there is none,
   * AGENT_DISABLED when it is turned off.
   */
  require(id: string): AgentDefinition {
    const agent = this.agents.get(id);
    if (agent === undefined) throw this.notFound(id, "run");
    if (!agent.profile.enabled) {
      throw new CharterError(
        "AGENT_DISABLED",
        `agent '${id}' (${agent.path}) is disabled (enabled: false): enable it, or run its file by path`,
        { details: { id, file: agent.path } },
      );
    }
    return agent;
  }

  /** Every agent, enabled or not, sorted by id. */
  list(): readonly AgentDefinition[] {
    return [...this.agents.values()].sort((left, right) => compareIds(left.id, right.id));
  }

  /** The agents selection may pick: the enabled ones, sorted by id. */
  enabled(): readonly AgentDefinition[] {
    return this.list().filter((agent) => agent.profile.enabled);
  }

  private notFound(id: string, action: "run" | "update"): CharterError {
    const ids = [...this.agents.keys()];
    const suggestion = nearestName(id, ids);
    return new CharterError(
      "AGENT_NOT_FOUND",
      `no agent with id '${id}' in the registry${action === "update" ? " to update (register creates an agent)" : ""}${suggestion === undefined ? "" : `; did you mean ${suggestion}?`} (charter agents list shows them; a file path needs a '/' or its extension, as in ./${id}.md)`,
      { details: { id, ...(suggestion === undefined ? {} : { suggestion }), known: ids.sort(compareIds) } },
    );
  }
}

/** Ids compare by code unit, never by locale: the order is the same on every machine. */
export function compareIds(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

function validatedDefinition(definition: AgentDefinition): AgentDefinition {
  const parsed = agentDefinitionSchema.safeParse(definition);
  if (!parsed.success) {
    const issues = schemaIssues(parsed.error, [], agentDefinitionSchema);
    const file = typeof definition?.path === "string" ? definition.path : "(no path)";
    throw new CharterError(
      "AGENT_PROFILE_INVALID",
      `agent profile ${file}: ${describeSchemaIssues(issues)}`,
      { details: { file, key: issues[0]?.key ?? "", issues } },
    );
  }
  if (definition.id === standardAgentId && !definition.profile.enabled) {
    throw new CharterError(
      "AGENT_PROFILE_INVALID",
      `agent profile ${definition.path}: the standard agent cannot be disabled: it is the agent selection falls back to (remove enabled: false, or give this agent another id)`,
      { details: { file: definition.path, key: "enabled", id: definition.id } },
    );
  }
  // A parsed file is frozen already; a definition built in code is copied and frozen, so that what was validated
  // is what stays registered.
  return Object.isFrozen(definition) ? definition : deepFreeze(structuredClone(definition));
}
