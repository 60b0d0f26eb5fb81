import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CharterError } from "../../src/foundation/charter-error.js";
import { parseWorkflowFile } from "../../src/workflow/load-workflow-file.js";
import { validateWorkflowInput } from "../../src/workflow/validate-workflow-input.js";
import { charterProcess, cli } from "../cli/cli-harness.js";

const releaseNotes = `id: release-notes
input: { type: object, required: [range], properties: { range: { type: string } } }
maxConcurrency: 1
failureStrategy: failFast
steps:
  - id: gather
    agent: researcher
    prompt: "List the changes in {{input.range}}"
    saveAs: changes
  - id: draft
    agent: writer
    dependsOn: [gather]
    prompt: "Write release notes from: {{steps.gather.report}}"
    compensate: { agent: cleaner, prompt: "Withdraw the draft: {{steps.draft.report}}" }
  - id: publish
    tool: { name: rest__publish, arguments: { text: "{{steps.draft.report}}" } }
    dependsOn: [draft]
output: "{{steps.draft.report}}"
`;

/** The error a workflow file's text is refused with. */
function refusal(text: string, file = "/w/test.workflow.yaml"): CharterError {
  try {
    parseWorkflowFile(text, file);
  } catch (error) {
    if (CharterError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("the workflow file was accepted");
}

function issuesOf(
  error: CharterError,
): { key: string; step: string | null; message: string; line?: number }[] {
  return error.details.issues as { key: string; step: string | null; message: string; line?: number }[];
}

describe("workflow files", () => {
  it("reads the documented example with every default filled in", () => {
    const { definition, directory } = parseWorkflowFile(releaseNotes, "/w/release.workflow.yaml");
    expect(directory).toBe("/w");
    expect(definition).toMatchObject({
      id: "release-notes",
      maxConcurrency: 1,
      failureStrategy: "failFast",
      output: "{{steps.draft.report}}",
    });
    expect(definition.steps.map((step) => [step.id, step.index, step.action.kind, step.dependsOn])).toEqual([
      ["gather", 0, "agent", []],
      ["draft", 1, "agent", ["gather"]],
      ["publish", 2, "tool", ["draft"]],
    ]);
    expect(definition.steps[1]?.compensate).toEqual({
      kind: "agent",
      agent: "cleaner",
      prompt: "Withdraw the draft: {{steps.draft.report}}",
    });
    expect(definition.steps[0]?.saveAs).toBe("changes");
  });

  it("defaults: maxConcurrency 1, failFast", () => {
    const { definition } = parseWorkflowFile(
      "id: one\nsteps:\n  - { id: a, agent: a.md, prompt: go }\n",
      "/w/one.workflow.yml",
    );
    expect(definition).toMatchObject({
      maxConcurrency: 1,
      failureStrategy: "failFast",
      input: null,
      output: null,
    });
  });

  it("reads JSON files as well", () => {
    const { definition } = parseWorkflowFile(
      JSON.stringify({
        id: "j",
        steps: [{ id: "a", tool: { name: "test__echo", arguments: { text: "hi" } } }],
      }),
      "/w/j.workflow.json",
    );
    expect(definition.steps[0]?.action).toEqual({
      kind: "tool",
      name: "test__echo",
      arguments: { text: "hi" },
    });
  });

  it("refuses a file not named *.workflow.yaml, .yml or .json", () => {
    expect(refusal("id: x\nsteps: []\n", "/w/x.yaml").code).toBe("WORKFLOW_FILE_INVALID");
  });

  it("names the file, key, line and step of an unknown key, with the nearest known one", () => {
    const error = refusal("id: x\nsteps:\n  - id: a\n    agent: a.md\n    prompt: go\n    dependOn: [b]\n");
    expect(error.code).toBe("WORKFLOW_FILE_INVALID");
    expect(error.details).toMatchObject({
      file: "/w/test.workflow.yaml",
      key: "steps[0].dependOn",
      step: "a",
      line: 6,
    });
    expect(error.message).toContain("did you mean dependsOn?");
  });

  it("a dependency on an unknown step is an error naming the nearest step", () => {
    const error = refusal(
      "id: x\nmaxConcurrency: 2\nsteps:\n  - { id: gather, agent: a.md, prompt: go }\n  - { id: draft, agent: a.md, prompt: go, dependsOn: [gathr] }\n",
    );
    expect(issuesOf(error)).toEqual([
      expect.objectContaining({
        key: "steps[1].dependsOn[0]",
        step: "draft",
        message: '"gathr" names no step; did you mean gather?',
      }),
    ]);
  });

  it("a template reading an unknown step, or a step that is not a dependency, is an error at load", () => {
    const error = refusal(
      [
        "id: x",
        "maxConcurrency: 3",
        "steps:",
        "  - { id: a, agent: a.md, prompt: go, saveAs: notes }",
        "  - { id: b, agent: a.md, prompt: 'from {{steps.a.report}} and {{memory.notes}}' }",
        "  - { id: c, agent: a.md, prompt: 'from {{steps.zz.report}}', dependsOn: [a] }",
        "  - { id: d, agent: a.md, prompt: 'from {{steps.a.json.items.0}} {{memory.notes}}', dependsOn: [c] }",
        "",
      ].join("\n"),
    );
    expect(issuesOf(error).map((found) => [found.key, found.step, found.message])).toEqual([
      [
        "steps[1].prompt",
        "b",
        '{{steps.a.report}}: step "b" does not depend on "a" (add it to dependsOn to read its result)',
      ],
      [
        "steps[1].prompt",
        "b",
        '{{memory.notes}}: "notes" is saved by step "a", which step "b" does not depend on (add it to dependsOn)',
      ],
      ["steps[2].prompt", "c", '{{steps.zz.report}} names no step "zz"'],
    ]);
  });

  it("dependency cycles are refused, naming the cycle", () => {
    const error = refusal(
      [
        "id: x",
        "maxConcurrency: 4",
        "steps:",
        "  - { id: a, agent: a.md, prompt: go }",
        "  - { id: b, agent: a.md, prompt: go, dependsOn: [a, d] }",
        "  - { id: c, agent: a.md, prompt: go, dependsOn: [b] }",
        "  - { id: d, agent: a.md, prompt: go, dependsOn: [c] }",
        "",
      ].join("\n"),
    );
    expect(issuesOf(error)).toEqual([
      expect.objectContaining({ step: "b", message: "dependency cycle: b -> d -> c -> b" }),
    ]);
    expect(error.message).toContain("dependency cycle: b -> d -> c -> b");
  });

  it("with maxConcurrency 1 a step may depend only on earlier steps (array order is the order)", () => {
    const error = refusal(
      "id: x\nsteps:\n  - { id: a, agent: a.md, prompt: go, dependsOn: [b] }\n  - { id: b, agent: a.md, prompt: go }\n",
    );
    expect(issuesOf(error)[0]).toMatchObject({ key: "steps[0].dependsOn[0]", step: "a" });
    expect(issuesOf(error)[0]?.message).toContain("array order");
  });

  it("each step runs an agent with a prompt or calls a tool; ids and memory keys are unique", () => {
    const error = refusal(
      [
        "id: x",
        "steps:",
        "  - { id: a, agent: a.md }",
        "  - { id: a, tool: { name: t }, agent: a.md, prompt: go }",
        "  - { id: c, prompt: go, saveAs: k }",
        "  - { id: d, tool: { name: t }, saveAs: k, compensate: { prompt: undo } }",
        "",
      ].join("\n"),
    );
    expect(issuesOf(error).map((found) => `${found.key}: ${found.message}`)).toEqual([
      'steps[1].id: step id "a" is already used by steps[0]',
      "steps[0].prompt: a step that runs an agent needs a prompt",
      "steps[1].tool: a step runs an agent or calls a tool, not both",
      "steps[2].agent: a step needs an agent (with a prompt) or a tool",
      "steps[3].compensate.agent: a compensation needs an agent (with a prompt) or a tool",
      'steps[3].saveAs: memory key "k" is already saved by step "c"',
    ]);
  });

  it("unreadable templates are named", () => {
    const error = refusal(
      "id: x\nsteps:\n  - { id: a, agent: a.md, prompt: 'hello {{input.name' }\n  - { id: b, agent: a.md, prompt: '{{ env.HOME }}' }\n",
    );
    expect(issuesOf(error).map((found) => found.message)).toEqual([
      'a "{{" is never closed with "}}"',
      "{{ env.HOME }} reads nothing a workflow has: a template reads input, steps.<id>.report, steps.<id>.json.<path> or memory.<key>",
    ]);
  });

  it("invalid input is refused against the input schema, naming the problem", () => {
    const { definition } = parseWorkflowFile(releaseNotes, "/w/release.workflow.yaml");
    expect(() =>
      validateWorkflowInput(definition, { range: "v1..v2" }, "/w/release.workflow.yaml"),
    ).not.toThrow();
    let refused: unknown = null;
    try {
      validateWorkflowInput(definition, { range: 3 }, "/w/release.workflow.yaml");
    } catch (error) {
      refused = error;
    }
    expect(refused).toMatchObject({
      code: "WORKFLOW_INPUT_INVALID",
      details: { workflow: "release-notes", problems: ["/range: must be string"] },
    });
  });
});

describe("charter workflow validate", () => {
  it("prints a valid workflow's summary and exits 0; lists every problem with its line and exits 4", async () => {
    const directory = await mkdtemp(join(tmpdir(), "charter-workflow-validate-"));
    // The registry the steps' ids resolve in: ./agents from where charter runs.
    await mkdir(join(directory, "agents"));
    for (const id of ["researcher", "writer", "cleaner"]) {
      await writeFile(join(directory, "agents", `${id}.md`), `---\nmodels: [local/m]\n---\nYou are ${id}.\n`);
    }
    const good = join(directory, "release.workflow.yaml");
    await writeFile(good, releaseNotes);
    const valid = await charterProcess(["workflow", "validate", good], { cwd: directory });
    expect(valid).toMatchObject({ exitCode: 0 });
    expect(valid.stdout).toBe(
      "valid: workflow release-notes, 3 steps (maxConcurrency 1, failureStrategy failFast)\n",
    );

    const bad = join(directory, "bad.workflow.yaml");
    await writeFile(bad, releaseNotes.replace("dependsOn: [gather]", "dependsOn: [gathr]"));
    const invalid = await cli(["workflow", "validate", bad, "--json"]);
    expect(invalid.exitCode).toBe(4);
    expect(JSON.parse(invalid.stdout)).toEqual({
      ok: false,
      file: bad,
      issues: [
        {
          key: "steps[1].dependsOn[0]",
          step: "draft",
          line: 12,
          message: '"gathr" names no step; did you mean gather?',
        },
        {
          key: "steps[1].prompt",
          step: "draft",
          line: 13,
          message:
            '{{steps.gather.report}}: step "draft" does not depend on "gather" (add it to dependsOn to read its result)',
        },
      ],
    });
    const text = await cli(["workflow", "validate", bad]);
    expect(text.exitCode).toBe(4);
    expect(text.stdout.split("\n")[0]).toBe(
      `${bad}:12: steps[1].dependsOn[0]: step "draft": "gathr" names no step; did you mean gather?`,
    );

    // A step's agent that does not resolve (an unknown registry id, a file that is not there) is a problem too.
    const unresolved = join(directory, "unresolved.workflow.yaml");
    await writeFile(
      unresolved,
      releaseNotes
        .replace("agent: researcher", "agent: reseacher")
        .replace("agent: cleaner", "agent: ./cleaner.md"),
    );
    const agents = await charterProcess(["workflow", "validate", unresolved, "--json"], { cwd: directory });
    expect(agents.exitCode).toBe(4);
    const issues = (JSON.parse(agents.stdout) as { issues: { key: string; step: string; message: string }[] })
      .issues;
    expect(issues.map((found) => [found.key, found.step])).toEqual([
      ["steps[0].agent", "gather"],
      ["steps[1].compensate.agent", "draft"],
    ]);
    expect(issues[0]?.message).toMatch(/^agent "reseacher" cannot be run: AGENT_NOT_FOUND: /);
    expect(issues[1]?.message).toMatch(/^agent "\.\/cleaner\.md" cannot be run: AGENT_FILE_INVALID: /);
  });
});
