import type { ContractFactoryInput } from "../../src/contract/contract-factory-input.js";
import type { ToolManifestEntry } from "../../src/contract/execution-contract.js";
import { deterministicEnvironment } from "../../src/foundation/environment.js";

export function manifestEntry(name: string): ToolManifestEntry {
  return {
    name,
    description: `The ${name} tool`,
    input_schema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    source: { kind: "mcp", server: "files", tool: name },
    annotations: null,
  };
}

export function factoryInput(changes: Partial<ContractFactoryInput> = {}): ContractFactoryInput {
  return {
    agent: { id: "reviewer", systemPrompt: "You review code.", settings: {} },
    configurationDefaults: {},
    overrides: {},
    modelTargets: [{ provider: "local", model: "qwen3", contextWindow: 32_768 }],
    toolManifest: [manifestEntry("read_file"), manifestEntry("apply_patch"), manifestEntry("final_report")],
    parentContractHash: null,
    adapterVersion: "protocol-adapter/1",
    environment: deterministicEnvironment(),
    ...changes,
  };
}
