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
  if (definition.type === "object" && path.length === 0) {
    for (const key of Object.keys(definition.shape ?? {})) keys.add(key);
    return;
  }
  for (const [inner, rest] of steps(definition, path)) collect(inner, rest, keys, depth + 1);
}

type Path = readonly (string | number)[];

/** The schemas one step further along `path`: through a wrapper (same path) or into a child (the path's rest). */
function steps(definition: SchemaDefinition, path: Path): [z.ZodType, Path][] {
  const same = (...inner: (z.ZodType | undefined)[]): [z.ZodType, Path][] =>
    inner.filter((schema) => schema !== undefined).map((schema) => [schema, path]);
  switch (definition.type) {
    case "optional":
    case "nullable":
    case "default":
    case "prefault":
    case "catch":
    case "readonly":
    case "nonoptional":
      return same(definition.innerType);
    case "pipe":
      return same(definition.in, definition.out);
    case "lazy":
      return same(definition.getter?.());
    case "union":
      return same(...(definition.options ?? []));
    case "intersection":
      return same(definition.left, definition.right);
    case "object": {
      const child = definition.shape?.[String(path[0])];
      return child === undefined ? [] : [[child, path.slice(1)]];
    }
    case "record":
      return path.length === 0 || definition.valueType === undefined
        ? []
        : [[definition.valueType, path.slice(1)]];
    case "array":
      return path.length === 0 || definition.element === undefined
        ? []
        : [[definition.element, path.slice(1)]];
    default:
      return [];
  }
}
