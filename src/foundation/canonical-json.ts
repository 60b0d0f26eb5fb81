/**
 * RFC 8785 (JSON Canonicalization Scheme) serializer: the one serializer for everything Charter hashes.
 * Object keys are sorted by UTF-16 code units; numbers and strings use ECMAScript's JSON serialization,
 * which is exactly what RFC 8785 specifies. `undefined` members are omitted, as JSON.stringify does.
 */
export function canonicalJson(value: unknown): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: non-finite number ${value}`);
      return JSON.stringify(value);
    case "object":
      break;
    default:
      throw new TypeError(`canonicalJson: unsupported type ${typeof value}`);
  }
  if (Array.isArray(value)) {
    let out = "[";
    for (let index = 0; index < value.length; index++) {
      if (index > 0) out += ",";
      const item = value[index];
      out += item === undefined ? "null" : canonicalJson(item);
    }
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  if (typeof (record as { toJSON?: unknown }).toJSON === "function") {
    return canonicalJson((record as { toJSON: () => unknown }).toJSON());
  }
  // Default sort compares UTF-16 code units, as RFC 8785 requires.
  const keys = Object.keys(record).sort();
  let out = "{";
  let first = true;
  for (const key of keys) {
    const member = record[key];
    if (member === undefined) continue;
    if (!first) out += ",";
    first = false;
    out += `${JSON.stringify(key)}:${canonicalJson(member)}`;
  }
  return `${out}}`;
}
