import { Ajv, type ErrorObject, type Options, type ValidateFunction } from "ajv";
import { Ajv2019 } from "ajv/dist/2019.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import * as ajvFormats from "ajv-formats";
import { canonicalJson } from "../foundation/canonical-json.js";
import { CharterError } from "../foundation/charter-error.js";

/** Validates one value; returns `null` when it is valid, otherwise one line per problem, each naming its path. */
export type JsonSchemaValidator = (value: unknown) => readonly string[] | null;

type Dialect = "draft-07" | "2019-09" | "2020-12";

const ajvOptions: Options = {
  // Tool schemas come from third-party servers; unknown keywords and formats must not make a tool unusable.
  strict: false,
  allErrors: true,
  // Schemas with an `$id` are not registered globally, so two tools may reuse an id without colliding.
  addUsedSchema: false,
};

// ajv-formats is CommonJS with a default export; under NodeNext the plugin is the namespace's `default`.
const addFormats = (ajvFormats as unknown as { default: (ajv: Ajv) => Ajv }).default;

const instances = new Map<Dialect, Ajv>();

function ajvFor(dialect: Dialect): Ajv {
  let ajv = instances.get(dialect);
  if (ajv === undefined) {
    ajv =
      dialect === "2020-12"
        ? new Ajv2020(ajvOptions)
        : dialect === "2019-09"
          ? new Ajv2019(ajvOptions)
          : new Ajv(ajvOptions);
    addFormats(ajv);
    instances.set(dialect, ajv);
  }
  return ajv;
}

function dialectOf(schema: Readonly<Record<string, unknown>>): { dialect: Dialect; known: boolean } {
  const declared = schema.$schema;
  if (typeof declared !== "string") return { dialect: "draft-07", known: true };
  if (declared.includes("2020-12")) return { dialect: "2020-12", known: true };
  if (declared.includes("2019-09")) return { dialect: "2019-09", known: true };
  return { dialect: "draft-07", known: declared.includes("draft-07") };
}

/** One readable line per Ajv error: where (the instance path) and what, with the offending property names. */
export function describeSchemaErrors(errors: readonly ErrorObject[]): string[] {
  return errors.map((error) => {
    const where = error.instancePath === "" ? "(root)" : error.instancePath;
    const params = error.params as Record<string, unknown>;
    let detail = "";
    if (error.keyword === "additionalProperties") detail = ` ('${String(params.additionalProperty)}')`;
    else if (error.keyword === "enum") detail = ` (${JSON.stringify(params.allowedValues)})`;
    else if (error.keyword === "const") detail = ` (${JSON.stringify(params.allowedValue)})`;
    return `${where}: ${error.message ?? error.keyword}${detail}`;
  });
}

/**
 * Compiles a JSON Schema once into a validator, choosing the dialect from its `$schema`
 * (2020-12, 2019-09, otherwise draft-07). A schema that cannot be compiled raises CONFIGURATION_INVALID.
 */
export function compileJsonSchema(schema: Readonly<Record<string, unknown>>): JsonSchemaValidator {
  // Compiling is the expensive part (about a millisecond per schema); every run of the same agent reuses it.
  const key = canonicalJson(schema);
  const cached = compiledValidators.get(key);
  if (cached !== undefined) return cached;
  const validator = compileUncached(schema);
  if (compiledValidators.size >= maximumCachedValidators) compiledValidators.clear();
  compiledValidators.set(key, validator);
  return validator;
}

const compiledValidators = new Map<string, JsonSchemaValidator>();
const maximumCachedValidators = 1000;

function compileUncached(schema: Readonly<Record<string, unknown>>): JsonSchemaValidator {
  const { dialect, known } = dialectOf(schema);
  // An unsupported `$schema` (draft-04, a private meta-schema) would make Ajv refuse the schema outright;
  // its keywords are close enough to draft-07 to validate against.
  const compilable = known ? schema : withoutMetaSchema(schema);
  let validate: ValidateFunction;
  try {
    validate = ajvFor(dialect).compile(compilable as Record<string, unknown>);
  } catch (error) {
    throw new CharterError("CONFIGURATION_INVALID", `JSON schema cannot be compiled: ${messageOf(error)}`, {
      details: { dialect, reason: messageOf(error) },
      cause: error,
    });
  }
  return (value) => (validate(value) ? null : describeSchemaErrors(validate.errors ?? []));
}

function withoutMetaSchema(schema: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = schema;
  return rest;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
