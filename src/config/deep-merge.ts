function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * Merges a higher-precedence layer over a lower one: objects merge key by key, arrays and scalars
 * (including `null`) replace. Neither input is modified.
 */
export function deepMerge(lower: unknown, higher: unknown): unknown {
  if (higher === undefined) return lower;
  if (!isPlainObject(lower) || !isPlainObject(higher)) return higher;
  const merged: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(lower), ...Object.keys(higher)])) {
    // defineProperty, not assignment: a key named "__proto__" must stay data, not become a prototype.
    Object.defineProperty(merged, key, {
      value: deepMerge(ownValue(lower, key), ownValue(higher, key)),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return merged;
}

function ownValue(record: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
