import type { AgentSettings } from "../config/agent-settings-schema.js";
import { contractDefaults } from "../contract/contract-defaults.js";
import type { DecisionSource } from "../contract/contract-factory-input.js";
import { CharterError } from "../foundation/charter-error.js";
import { nearestName } from "../foundation/nearest-name.js";
import type { Ability, AbilityLibrary } from "./ability.js";
import type { AgentAbilities } from "./agent-abilities.js";

/** The three setting layers, highest precedence first: `--set`, the agent file, the configuration's `defaults`. */
export interface AbilitySettingLayers {
  readonly overrides: Pick<AgentSettings, "coreAbilities" | "abilities" | "abilityTokenBudget">;
  readonly agent: Pick<AgentSettings, "coreAbilities" | "abilities" | "abilityTokenBudget">;
  readonly defaults: Pick<AgentSettings, "coreAbilities" | "abilities" | "abilityTokenBudget">;
}

type AbilityListKey = "coreAbilities" | "abilities";

/**
 * Resolves the abilities an agent names (`coreAbilities`, `abilities`, `abilityTokenBudget`, each from the highest
 * layer that sets it) against the library. Null when the agent names none, so that nothing is read or counted for
 * it. An id the library does not hold is `ABILITY_UNKNOWN`, naming the agent file, the key and the folder, before
 * anything runs. `loadLibrary` is called only when there is something to look up.
 */
export async function resolveAgentAbilities(options: {
  readonly agentFile: string;
  readonly layers: AbilitySettingLayers;
  readonly loadLibrary: () => Promise<AbilityLibrary>;
}): Promise<AgentAbilities | null> {
  const core = layered(options.layers, "coreAbilities");
  const candidates = layered(options.layers, "abilities");
  if ((core?.value.length ?? 0) === 0 && (candidates?.value.length ?? 0) === 0) return null;
  const library = await options.loadLibrary();
  const lookUp = (key: AbilityListKey, found: { value: readonly string[]; source: DecisionSource }) =>
    [...new Set(found.value)].map((id) => abilityOf(library, id, key, found.source, options.agentFile));
  const coreAbilities = core === undefined ? [] : lookUp("coreAbilities", core);
  const coreIds = new Set(coreAbilities.map((ability) => ability.id));
  // An ability named in both lists is a core one: always included, once.
  const candidateAbilities = (candidates === undefined ? [] : lookUp("abilities", candidates)).filter(
    (ability) => !coreIds.has(ability.id),
  );
  const budget = options.layers.overrides.abilityTokenBudget ?? options.layers.agent.abilityTokenBudget;
  const budgetSource: DecisionSource =
    options.layers.overrides.abilityTokenBudget !== undefined
      ? "cli"
      : options.layers.agent.abilityTokenBudget !== undefined
        ? "agent"
        : options.layers.defaults.abilityTokenBudget !== undefined
          ? "configuration"
          : "default";
  return {
    core: coreAbilities,
    candidates: candidateAbilities,
    tokenBudget: budget ?? options.layers.defaults.abilityTokenBudget ?? contractDefaults.abilityTokenBudget,
    tokenBudgetSource: budgetSource,
  };
}

function layered(
  layers: AbilitySettingLayers,
  key: AbilityListKey,
): { value: readonly string[]; source: DecisionSource } | undefined {
  const ordered: readonly [DecisionSource, AbilitySettingLayers["agent"]][] = [
    ["cli", layers.overrides],
    ["agent", layers.agent],
    ["configuration", layers.defaults],
  ];
  for (const [source, settings] of ordered) {
    const value = settings[key];
    if (value !== undefined) return { value, source };
  }
  return undefined;
}

const whereSet: Record<DecisionSource, string> = {
  cli: "--set",
  agent: "the agent file",
  configuration: "the configuration's defaults",
  model: "the model configuration",
  default: "the defaults",
  input: "the caller",
};

function abilityOf(
  library: AbilityLibrary,
  id: string,
  key: AbilityListKey,
  source: DecisionSource,
  agentFile: string,
): Ability {
  const ability = library.abilities.get(id);
  if (ability !== undefined) return ability;
  const suggestion = nearestName(id, library.abilities.keys());
  const known = [...library.abilities.keys()].sort();
  const folder = library.exists
    ? `the abilities folder ${library.directory}${known.length === 0 ? " (which holds none)" : ` (which holds ${known.join(", ")})`}`
    : `the abilities folder ${library.directory}, which does not exist (set abilitiesDir in the configuration)`;
  throw new CharterError(
    "ABILITY_UNKNOWN",
    `Agent file ${agentFile}: ${key} (from ${whereSet[source]}) names the ability "${id}", which is not in ${folder}${suggestion === undefined ? "" : `; did you mean ${suggestion}?`}`,
    {
      details: {
        file: agentFile,
        key,
        id,
        source,
        directory: library.directory,
        ...(suggestion === undefined ? {} : { suggestion }),
      },
    },
  );
}
