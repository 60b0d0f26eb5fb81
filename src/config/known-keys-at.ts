import type { z } from "zod";

/** The parts of a zod 4 schema definition this walk reads; every other kind of schema has no keys to offer. */
interface SchemaDefinition {
  readonly type: string;
  readonly shape?: Record<string, z.ZodType>;
  readonly innerType?: z.ZodType;
  readonly valueType?: z.ZodType;
  readonly element?: z.ZodType;
  readonly options?: readonly z.ZodType[];
  readonly in?: z.ZodType;
  readonly out?: z.ZodType;
  readonly left?: z.ZodType;
  readonly right?: z.ZodType;
  readonly getter?: () => z.ZodType;
}

function definitionOf(schema: z.ZodType): SchemaDefinition {
  return (schema as unknown as { _zod: { def: SchemaDefinition } })._zod.def;
}

/**
 * The keys the object schema(s) at `path` inside `schema` accept, for suggesting the key an unknown one was
 * meant to be. Walks through optional, default, nullable, pipe and lazy wrappers, into records and arrays by any
 * key or index, and collects the keys of every option of a union (an MCP server's keys are those of all its
 * transports). Empty when the path leads to no object.
 */
export function knownKeysAt(schema: z.ZodType, path: readonly (string | number)[]): string[] {
  const keys = new Set<string>();
  collect(schema, path, keys, 0);
  return [...keys];
}

function collect(
  schema: z.ZodType,
  path: readonly (string | number)[],
  keys: Set<string>,
  depth: number,
): void {
  // A recursive schema (lazy) could walk forever; real configuration nests far less deep than this.
  if (depth > 64) return;
  const definition = definitionOf(schema);
  const next = (inner: z.ZodType | undefined, rest = path) => {
    if (inner !== undefined) collect(inner, rest, keys, depth + 1);
  };
  switch (definition.type) {
    case "optional":
    case "nullable":
    case "default":
    case "prefault":
    case "catch":
    case "readonly":
    case "nonoptional":
      return next(definition.innerType);
    case "pipe":
      next(definition.in);
      return next(definition.out);
    case "lazy":
      return next(definition.getter?.());
    case "union":
      for (const option of definition.options ?? []) next(option);
      return;
    case "intersection":
      next(definition.left);
      return next(definition.right);
    case "object": {
      const shape = definition.shape ?? {};
      if (path.length === 0) {
        for (const key of Object.keys(shape)) keys.add(key);
        return;
      }
      const [head, ...rest] = path;
      const child = shape[String(head)];
      return next(child, rest);
    }
    case "record":
      return path.length === 0 ? undefined : next(definition.valueType, path.slice(1));
    case "array":
      return path.length === 0 ? undefined : next(definition.element, path.slice(1));
    default:
      return;
  }
}
