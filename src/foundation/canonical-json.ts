/**
 * RFC 8785 (JSON Canonicalization Scheme) serializer: the one serializer for everything Charter hashes.
 * Object keys are sorted by UTF-16 code units; numbers and strings use ECMAScript's JSON serialization,
 * which is exactly what RFC 8785 specifies. `undefined` members are omitted, as JSON.stringify does.
 */
export function canonicalJson(value: unknown): string {
  // When every object in the value already lists its keys in sorted order (Charter builds its hot
  // objects that way), JSON.stringify produces exactly the canonical text, several times faster.
  if (isInCanonicalOrder(value)) return JSON.stringify(value) ?? "null";
  // Otherwise a copy with keys inserted in sorted order, serialized by JSON.stringify, is still about twice as
  // fast as building the text piece by piece; `serialize` handles what a copy cannot represent.
  const sorted = sortedCopy(value);
  return sorted === unrepresentable ? serialize(value) : (JSON.stringify(sorted) ?? "null");
}

const unrepresentable = Symbol("unrepresentable");

/**
 * A copy of a JSON value whose objects list their keys in sorted order, or `unrepresentable` when
 * JSON.stringify could not reproduce that order: keys starting with a digit (engines list array-index keys
 * first) and `__proto__` (an accessor on ordinary objects).
 */
function sortedCopy(value: unknown): unknown {
  if (value === null || typeof value !== "object") {
    if (typeof value === "number" && !Number.isFinite(value)) return unrepresentable;
    if (typeof value === "bigint" || typeof value === "function" || typeof value === "symbol")
      return unrepresentable;
    return value;
  }
  if (Array.isArray(value)) {
    const copy = new Array<unknown>(value.length);
    for (let index = 0; index < value.length; index++) {
      const item = value[index];
      const copied = item === undefined ? null : sortedCopy(item);
      if (copied === unrepresentable) return unrepresentable;
      copy[index] = copied;
    }
    return copy;
  }
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return unrepresentable;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  const copy: Record<string, unknown> = {};
  for (const key of keys) {
    const first = key.charCodeAt(0);
    if ((first >= 48 && first <= 57) || key === "__proto__") return unrepresentable;
    const member = record[key];
    if (member === undefined) continue;
    const copied = sortedCopy(member);
    if (copied === unrepresentable) return unrepresentable;
    copy[key] = copied;
  }
  return copy;
}

function isInCanonicalOrder(value: unknown): boolean {
  if (value === null) return true;
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(value);
    case "object":
      break;
    default:
      return false;
  }
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const item = value[index];
      if (item !== undefined && !isInCanonicalOrder(item)) return false;
    }
    return true;
  }
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return false;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index] as string;
    if (index > 0 && (keys[index - 1] as string) > key) return false;
    const member = record[key];
    if (member !== undefined && !isInCanonicalOrder(member)) return false;
  }
  return true;
}

function serialize(value: unknown): string {
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
      out += item === undefined ? "null" : serialize(item);
    }
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  if (typeof (record as { toJSON?: unknown }).toJSON === "function") {
    return serialize((record as { toJSON: () => unknown }).toJSON());
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
    out += `${JSON.stringify(key)}:${serialize(member)}`;
  }
  return `${out}}`;
}
