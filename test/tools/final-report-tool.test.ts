import { describe, expect, it } from "vitest";
import { CharterError } from "../../src/foundation/charter-error.js";
import { createFinalReportTool } from "../../src/tools/builtin/final-report-tool.js";
import { compileJsonSchema } from "../../src/tools/compile-json-schema.js";
import { createDefaultPipeline } from "../../src/tools/create-default-pipeline.js";
import { ToolRegistry } from "../../src/tools/tool-registry.js";
import { callContext } from "./tool-call-fixture.js";

const answerSchema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  properties: { answer: { type: "string" }, sources: { type: "array", items: { $ref: "#/$defs/source" } } },
  required: ["answer"],
  additionalProperties: false,
  $defs: { source: { type: "object", properties: { url: { type: "string" } }, required: ["url"] } },
};

describe("createFinalReportTool", () => {
  it("describes text and markdown reports as {format: const, content, metadata?}", () => {
    for (const format of ["text", "markdown"] as const) {
      const tool = createFinalReportTool({ format, schema: null });
      expect(tool.manifest.name).toBe("final_report");
      expect(tool.manifest.source).toEqual({ kind: "builtin", server: null, tool: "final_report" });
      expect(tool.manifest.input_schema).toMatchObject({
        type: "object",
        properties: { format: { const: format }, content: { type: "string" }, metadata: { type: "object" } },
        required: ["format", "content"],
        additionalProperties: false,
      });
      expect(Object.isFrozen(tool.manifest.input_schema)).toBe(true);
    }
  });

  it("validates a text report, and refuses the wrong format or a missing content with TOOL_INPUT_INVALID", () => {
    const tool = createFinalReportTool({ format: "markdown", schema: null });
    expect(
      tool.validateFinalReportArguments({ format: "markdown", content: "# Done", metadata: { pages: 2 } }),
    ).toEqual({
      ok: true,
      report: { format: "markdown", content: "# Done", metadata: { pages: 2 } },
    });
    const wrongFormat = tool.validateFinalReportArguments({ format: "text", content: "Done" });
    expect(wrongFormat).toMatchObject({ ok: false, code: "TOOL_INPUT_INVALID" });
    expect(tool.validateFinalReportArguments({ format: "markdown" })).toMatchObject({
      ok: false,
      code: "TOOL_INPUT_INVALID",
    });
    expect(tool.validateFinalReportArguments("not an object")).toMatchObject({
      ok: false,
      code: "TOOL_INPUT_INVALID",
    });
  });

  it("embeds the agent's schema as content_json, keeping its $defs references resolvable", () => {
    const tool = createFinalReportTool({ format: "json", schema: answerSchema });
    const schema = tool.manifest.input_schema;
    expect(schema).toMatchObject({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      required: ["format", "content_json"],
      properties: { format: { const: "json" }, content_json: { required: ["answer"] } },
      $defs: answerSchema.$defs,
    });
    // The schema the model sees is itself usable: it accepts a good call and refuses a bad source.
    const validate = compileJsonSchema(schema);
    expect(validate({ format: "json", content_json: { answer: "42", sources: [{ url: "u" }] } })).toBeNull();
    expect(validate({ format: "json", content_json: { answer: "42", sources: [{}] } })).not.toBeNull();
  });

  it("validates content_json against the agent's schema: OUTPUT_SCHEMA_INVALID with paths when it does not match", () => {
    const tool = createFinalReportTool({ format: "json", schema: answerSchema });
    const good = { answer: "42", sources: [{ url: "https://example.org" }] };
    expect(tool.validateFinalReportArguments({ format: "json", content_json: good })).toEqual({
      ok: true,
      report: { format: "json", content_json: good },
    });
    const bad = tool.validateFinalReportArguments({
      format: "json",
      content_json: { answer: 42, sources: [{}] },
    });
    expect(bad).toMatchObject({ ok: false, code: "OUTPUT_SCHEMA_INVALID" });
    const errors = bad.ok ? [] : bad.errors;
    expect(errors.some((error) => error.includes("/answer"))).toBe(true);
    expect(errors.some((error) => error.includes("/sources/0"))).toBe(true);
    expect(tool.validateFinalReportArguments({ format: "json", content: "42" })).toMatchObject({
      ok: false,
      code: "TOOL_INPUT_INVALID",
    });
  });

  it("accepts any JSON object when the agent has no schema", () => {
    const tool = createFinalReportTool({ format: "json", schema: null });
    expect(tool.validateFinalReportArguments({ format: "json", content_json: { free: ["form"] } }).ok).toBe(
      true,
    );
    expect(tool.validateFinalReportArguments({ format: "json", content_json: [1, 2] })).toMatchObject({
      ok: false,
      code: "OUTPUT_SCHEMA_INVALID",
    });
  });

  it("raises CONFIGURATION_INVALID for an agent schema that cannot be compiled", () => {
    let code: string | null = null;
    try {
      createFinalReportTool({ format: "json", schema: { type: "object", properties: { a: { type: 12 } } } });
    } catch (error) {
      code = CharterError.isInstance(error) ? error.code : "not a CharterError";
    }
    expect(code).toBe("CONFIGURATION_INVALID");
  });

  it("throws the failing code from execute, so a pipeline run reports it", async () => {
    const tool = createFinalReportTool({ format: "json", schema: answerSchema });
    const rejection = await tool
      .execute(
        { format: "json", content_json: { answer: 1 } },
        {
          signal: new AbortController().signal,
          runId: "r",
          callId: "c",
        },
      )
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(CharterError.isInstance(rejection) && rejection.code).toBe("OUTPUT_SCHEMA_INVALID");

    const registry = new ToolRegistry([tool]);
    const accepted = await createDefaultPipeline()(
      callContext(registry, "final_report", { format: "json", content_json: { answer: "yes" } }),
    );
    expect(accepted).toMatchObject({ status: "ok", executed: true });
  });
});
