import type { OutputFormat } from "../../contract/execution-contract.js";
import { CharterError } from "../../foundation/charter-error.js";
import { deepFreeze } from "../../foundation/deep-freeze.js";
import { compileJsonSchema } from "../compile-json-schema.js";
import type { RegisteredTool } from "../tool-definition.js";

export interface FinalReportToolOptions {
  readonly format: OutputFormat;
  /** The agent's output schema, for the `json` format; `null` accepts any JSON object. */
  readonly schema: Readonly<Record<string, unknown>> | null;
}

/** What the model provided: the runtime adds status, source and timestamp (seed 000 §6). */
export interface FinalReportArguments {
  readonly format: OutputFormat;
  readonly content?: string;
  readonly content_json?: unknown;
  readonly metadata?: Readonly<Record<string, unknown>>;
}

export type FinalReportValidation =
  | { readonly ok: true; readonly report: FinalReportArguments }
  | {
      readonly ok: false;
      readonly errors: readonly string[];
      /** TOOL_INPUT_INVALID: the call's shape is wrong. OUTPUT_SCHEMA_INVALID: `content_json` breaks the schema. */
      readonly code: "TOOL_INPUT_INVALID" | "OUTPUT_SCHEMA_INVALID";
    };

export interface FinalReportTool extends RegisteredTool {
  validateFinalReportArguments(args: unknown): FinalReportValidation;
}

const metadataProperty = { type: "object", description: "Optional facts about the report." };

function formatProperty(format: OutputFormat) {
  return { type: "string", const: format, description: `Always "${format}".` };
}

/**
 * The input schema the model sees. The agent's schema is embedded as `content_json`; its `$schema`, `$defs`
 * and `definitions` move to the root, where its `#/...` references resolve (unless it has its own `$id`, which
 * makes it a resource of its own).
 */
function inputSchemaFor(
  format: OutputFormat,
  schema: Readonly<Record<string, unknown>> | null,
): Record<string, unknown> {
  if (format !== "json") {
    return {
      type: "object",
      properties: {
        format: formatProperty(format),
        content: { type: "string", description: `The final report, as ${format}.` },
        metadata: metadataProperty,
      },
      required: ["format", "content"],
      additionalProperties: false,
    };
  }
  const { $schema, $defs, definitions, ...body } = schema ?? { type: "object" };
  const ownResource = typeof body.$id === "string";
  return {
    ...($schema === undefined ? {} : { $schema }),
    type: "object",
    properties: {
      format: formatProperty("json"),
      content_json: ownResource
        ? {
            ...body,
            ...($defs === undefined ? {} : { $defs }),
            ...(definitions === undefined ? {} : { definitions }),
          }
        : { description: "The final report, as JSON matching the expected schema.", ...body },
      metadata: metadataProperty,
    },
    required: ["format", "content_json"],
    additionalProperties: false,
    ...(ownResource || $defs === undefined ? {} : { $defs }),
    ...(ownResource || definitions === undefined ? {} : { definitions }),
  };
}

/**
 * The `final_report` tool: its manifest entry for the expected format, and the validation of its arguments.
 * What a final report means for the run is the session's decision; calling `execute` only validates, and
 * throws the failing code (TOOL_INPUT_INVALID or OUTPUT_SCHEMA_INVALID) so that the pipeline reports it.
 */
export function createFinalReportTool(options: FinalReportToolOptions): FinalReportTool {
  const { format } = options;
  const inputSchema = inputSchemaFor(format, options.schema);
  // The call's shape is checked apart from the agent's schema, so that each failure gets its own code.
  const shapeSchema =
    format === "json"
      ? { ...inputSchema, properties: { ...(inputSchema.properties as object), content_json: {} } }
      : inputSchema;
  const validateShape = compileJsonSchema(shapeSchema);
  let validateContent: ((value: unknown) => readonly string[] | null) | null = null;
  if (format === "json") {
    try {
      validateContent = compileJsonSchema(options.schema ?? { type: "object" });
    } catch (error) {
      throw new CharterError("CONFIGURATION_INVALID", "the agent's output schema cannot be compiled", {
        details: { tool: "final_report", ...(CharterError.isInstance(error) ? error.details : {}) },
        cause: error,
      });
    }
  }

  function validateFinalReportArguments(args: unknown): FinalReportValidation {
    const shapeErrors = validateShape(args);
    if (shapeErrors !== null) return { ok: false, errors: shapeErrors, code: "TOOL_INPUT_INVALID" };
    const record = args as Readonly<Record<string, unknown>>;
    const metadata = record.metadata as Readonly<Record<string, unknown>> | undefined;
    if (validateContent !== null) {
      const contentErrors = validateContent(record.content_json);
      if (contentErrors !== null) {
        return {
          ok: false,
          errors: contentErrors.map((error) => `content_json ${error}`),
          code: "OUTPUT_SCHEMA_INVALID",
        };
      }
      return {
        ok: true,
        report: { format, content_json: record.content_json, ...(metadata ? { metadata } : {}) },
      };
    }
    return {
      ok: true,
      report: { format, content: record.content as string, ...(metadata ? { metadata } : {}) },
    };
  }

  return {
    manifest: deepFreeze({
      name: "final_report",
      description: `Delivers the final answer and ends the task. Call it once, with the report as ${format}.`,
      input_schema: inputSchema,
      source: { kind: "builtin" as const, server: null, tool: "final_report" },
      annotations: null,
    }),
    validateFinalReportArguments,
    async execute(input) {
      const validation = validateFinalReportArguments(input);
      if (!validation.ok) {
        throw new CharterError(validation.code, `final report invalid: ${validation.errors.join("; ")}`, {
          details: { errors: validation.errors },
        });
      }
      return { text: "final report received", isError: false };
    },
  };
}
