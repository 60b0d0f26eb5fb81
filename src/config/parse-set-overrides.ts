import { CharterError } from "../foundation/charter-error.js";
import { nearestName } from "../foundation/nearest-name.js";
import {
  type AgentSettings,
  agentSettingKeys,
  agentSettingsShape,
  isAgentSettingKey,
} from "./agent-settings-schema.js";
import { formatKeyPath, schemaIssues } from "./schema-issues.js";

/**
 * Parses command-line `--set key=value` assignments into settings, the highest precedence layer. Keys are
 * the agent frontmatter keys. A value is read as a JSON literal when it parses as one (`5`, `null`, `true`,
 * `["a","b"]`) and as a plain string otherwise (`required`, `5s`); when the JSON reading does not fit the
 * key but the plain string does (`description=42`), the string wins. Later assignments of a key win.
 */
export function parseSetOverrides(assignments: readonly string[]): AgentSettings {
  const overrides: Record<string, unknown> = {};
  for (const assignment of assignments) {
    const separator = assignment.indexOf("=");
    if (separator <= 0) {
      throw new CharterError("ARGUMENT_INVALID", `--set ${JSON.stringify(assignment)}: expected key=value`, {
        details: { argument: assignment },
      });
    }
    const key = assignment.slice(0, separator).trim();
    const text = assignment.slice(separator + 1);
    if (!isAgentSettingKey(key)) {
      const suggestion = nearestName(key, agentSettingKeys);
      throw new CharterError(
        "ARGUMENT_INVALID",
        `--set ${key}: unknown key${suggestion === undefined ? "" : `; did you mean ${suggestion}?`} (known keys: ${agentSettingKeys.join(", ")})`,
        { details: { argument: assignment, key, ...(suggestion !== undefined ? { suggestion } : {}) } },
      );
    }
    const schema = agentSettingsShape[key];
    const literal = readJsonLiteral(text);
    const asLiteral = literal.parsed ? schema.safeParse(literal.value) : undefined;
    if (asLiteral?.success) {
      overrides[key] = asLiteral.data;
      continue;
    }
    const asString = schema.safeParse(text);
    if (asString.success) {
      overrides[key] = asString.data;
      continue;
    }
    // The JSON reading is the primary one, so its problem is the one reported when there is one.
    const failure = asLiteral === undefined ? asString.error : asLiteral.error;
    const issues = schemaIssues(failure, [key]);
    const first = issues[0];
    throw new CharterError(
      "ARGUMENT_INVALID",
      `--set ${key}: invalid value ${JSON.stringify(text)}${first === undefined ? "" : ` (${formatKeyPath(first.path)}: ${first.message})`}`,
      { details: { argument: assignment, key, issues } },
    );
  }
  return overrides as AgentSettings;
}

function readJsonLiteral(text: string): { parsed: true; value: unknown } | { parsed: false } {
  try {
    return { parsed: true, value: JSON.parse(text) };
  } catch {
    return { parsed: false };
  }
}
