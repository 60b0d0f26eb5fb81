import type { CompiledQuery } from "kysely";

/** Marks a value as a template slot; no value Charter stores starts with a NUL character and this text. */
const slotPrefix = "\u0000charter-slot:";

/** Hands out slots while a template's query is built: each stands for a value supplied at execution. */
export interface SlotAllocator<Key> {
  /** A placeholder value (typed as the column's) that becomes the value of `key` when the template runs. */
  slot<T>(key: Key): T;
}

type Parameter<Key> = { readonly key: Key } | { readonly constant: unknown };

/**
 * A statement compiled by Kysely once and executed many times with new values: the SQL (and so the prepared
 * statement) is reused, only the parameters are rebuilt. Compiling a query costs more than running it on
 * SQLite, and a COMMIT issues the same few statement shapes again and again.
 */
export interface QueryTemplate<Key> {
  /** The query with the values of its slots, in the order its SQL binds them. */
  instantiate(value: (key: Key) => unknown): CompiledQuery;
}

/**
 * Builds a template: `build` makes the query with `slot(key)` wherever a value varies between executions.
 * Kysely binds each value as one parameter, so every compiled parameter is either a slot or a constant of the
 * query (a status literal, say). A slot must be used as a whole value, never inside a larger one.
 */
export function compileQueryTemplate<Key>(
  build: (slots: SlotAllocator<Key>) => { compile(): CompiledQuery },
): QueryTemplate<Key> {
  const keys: Key[] = [];
  const compiled = build({
    slot<T>(key: Key): T {
      keys.push(key);
      return `${slotPrefix}${keys.length - 1}` as T;
    },
  }).compile();
  const parameters: Parameter<Key>[] = compiled.parameters.map((parameter) =>
    typeof parameter === "string" && parameter.startsWith(slotPrefix)
      ? { key: keys[Number(parameter.slice(slotPrefix.length))] as Key }
      : { constant: parameter },
  );
  return {
    instantiate(value) {
      const values = new Array<unknown>(parameters.length);
      for (let index = 0; index < parameters.length; index++) {
        const parameter = parameters[index] as Parameter<Key>;
        values[index] = "key" in parameter ? value(parameter.key) : parameter.constant;
      }
      return { ...compiled, parameters: values };
    },
  };
}
