import { describe, expect, it } from "vitest";
import { CharterError } from "../../src/foundation/charter-error.js";
import { parseWorkItem } from "../../src/work/load-work-item.js";

function failure(text: string, path = "/items/item.yaml"): CharterError {
  try {
    parseWorkItem(text, path);
  } catch (error) {
    if (CharterError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("the work item was accepted");
}

describe("the work item", () => {
  it("takes the seed's defaults for its limits", () => {
    const loaded = parseWorkItem("id: item-1\nagent_id: agent.md\ndescription: Do it\n", "/items/item.yaml");
    expect(loaded.item).toEqual({
      id: "item-1",
      agent_id: "agent.md",
      description: "Do it",
      dependencies: [],
      constraints: { max_files: 10, max_tool_ops: 50, max_delta_size: 100, timeout_ms: 300000 },
      allow_commands: false,
    });
    expect(loaded.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(parseWorkItem(JSON.stringify(loaded.item), "/items/item.json").hash).toBe(loaded.hash);
  });

  it("is refused with WORK_ITEM_INVALID naming the field", () => {
    const wrongType = failure(
      "id: item-1\nagent_id: agent.md\ndescription: Do it\nconstraints:\n  max_files: -1\n",
    );
    expect(wrongType.code).toBe("WORK_ITEM_INVALID");
    expect(wrongType.details.field).toBe("constraints.max_files");
    const unknown = failure("id: item-1\nagent_id: a.md\ndescription: x\nconstraints:\n  max_file: 2\n");
    expect(unknown.details.field).toBe("constraints.max_file");
    expect(unknown.message).toContain("did you mean max_files?");
    expect(failure("agent_id: a.md\ndescription: x\n").details.field).toBe("id");
    expect(failure("id: ../x\nagent_id: a.md\ndescription: x\n").details.field).toBe("id");
    expect(failure("{", "/items/item.json").details.reason).toBe("syntax");
  });
});
