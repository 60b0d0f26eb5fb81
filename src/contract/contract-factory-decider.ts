import type {
  ContractFactoryInput,
  ContractSettings,
  DecisionSource,
  ModelParameterSettings,
} from "./contract-factory-input.js";

type SettingValue<Key extends keyof ContractSettings> = Exclude<ContractSettings[Key], undefined>;

export interface LayeredSetting<Key extends keyof ContractSettings> {
  readonly value: SettingValue<Key>;
  readonly source: DecisionSource;
}

/**
 * Resolves one setting through the precedence ladder (command line > agent file > configuration
 * `defaults` > per-model configuration > built-in default) and records where the value came from.
 */
export interface ContractDecider {
  <Key extends keyof ContractSettings, Fallback>(
    decisionKey: string,
    key: Key,
    fallback: Fallback,
    modelValue?: ContractSettings[Key],
  ): SettingValue<Key> | Fallback;
  /** The value from the three setting layers only (no model, no default), or undefined. */
  layered<Key extends keyof ContractSettings>(key: Key): LayeredSetting<Key> | undefined;
  /**
   * A request parameter for one model target: command line > that target's per-model configuration > agent
   * file > configuration `defaults` > built-in default. Per-model values beat the agent so that, say,
   * `temperature: null` configured for a reasoning model is honoured whatever the agent asks for. Records
   * nothing: the caller names the decision.
   */
  forTarget<Key extends keyof ModelParameterSettings, Fallback>(
    key: Key,
    fallback: Fallback,
    modelValue: ModelParameterSettings[Key] | undefined,
  ): { readonly value: SettingValue<Key> | Fallback; readonly source: DecisionSource };
  record(decisionKey: string, source: DecisionSource): void;
  /** A decision whose record is a sentence rather than a source (what was cut to fit a budget, say). */
  note(decisionKey: string, text: string): void;
  readonly decisions: Record<string, string>;
}

export function contractDecider(input: ContractFactoryInput): ContractDecider {
  const layers: readonly (readonly [DecisionSource, ContractSettings])[] = [
    ["cli", input.overrides],
    ["agent", input.agent.settings],
    ["configuration", input.configurationDefaults],
  ];
  const decisions: Record<string, string> = {};

  function layered<Key extends keyof ContractSettings>(key: Key): LayeredSetting<Key> | undefined {
    for (const [source, settings] of layers) {
      const value = settings[key];
      if (value !== undefined) return { value: value as SettingValue<Key>, source };
    }
    return undefined;
  }

  function decide<Key extends keyof ContractSettings, Fallback>(
    decisionKey: string,
    key: Key,
    fallback: Fallback,
    modelValue?: ContractSettings[Key],
  ): SettingValue<Key> | Fallback {
    const found = layered(key);
    if (found !== undefined) {
      decisions[decisionKey] = found.source;
      return found.value;
    }
    if (modelValue !== undefined) {
      decisions[decisionKey] = "model";
      return modelValue as SettingValue<Key>;
    }
    decisions[decisionKey] = "default";
    return fallback;
  }

  function forTarget<Key extends keyof ModelParameterSettings, Fallback>(
    key: Key,
    fallback: Fallback,
    modelValue: ModelParameterSettings[Key] | undefined,
  ): { readonly value: SettingValue<Key> | Fallback; readonly source: DecisionSource } {
    const fromCommandLine = input.overrides[key];
    if (fromCommandLine !== undefined) return { value: fromCommandLine as SettingValue<Key>, source: "cli" };
    if (modelValue !== undefined) return { value: modelValue as SettingValue<Key>, source: "model" };
    const found = layered(key);
    return found === undefined ? { value: fallback, source: "default" } : found;
  }

  return Object.assign(decide, {
    layered,
    forTarget,
    record(decisionKey: string, source: DecisionSource): void {
      decisions[decisionKey] = source;
    },
    note(decisionKey: string, text: string): void {
      decisions[decisionKey] = text;
    },
    decisions,
  });
}
