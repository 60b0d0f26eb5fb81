import { CharterError } from "./charter-error.js";

/**
 * RFC 8785 (JSON Canonicalization Scheme) serializer: the one serializer for everything Charter hashes.
 * Object keys are sorted by UTF-16 code units; numbers and strings use ECMAScript's JSON serialization,
 * which is exactly what RFC 8785 specifies. `undefined` members are omitted, as JSON.stringify does.
 */
export function canonicalJson(value: unknown): string {
  // When every object in the value already lists its keys in sorted order (Charter builds its hot
  // objects that way), JSON.stringify produces exactly the canonical text, several times faster. The walk
  // also bounds the depth (maxJsonDepth) before anything else recurses into the value.
  if (isInCanonicalOrder(value, 0)) return JSON.stringify(value) ?? "null";
  // Otherwise a copy with keys inserted in sorted order, serialized by JSON.stringify, is still about twice as
  // fast as building the text piece by piece; `serialize` handles what a copy cannot represent.
  const sorted = sortedCopy(value);
  return sorted === unrepresentable ? serialize(value) : (JSON.stringify(sorted) ?? "null");
}

const unrepresentable = Symbol("unrepresentable");

/**
 * The deepest nesting Charter serialises, hashes or redacts. Everything it hashes is built or bounded by it
 * (tool arguments are refused past 64 levels), so only a hostile payload gets here; it is refused with
 * VALUE_TOO_DEEP instead of exhausting the stack (JSON.stringify itself fails somewhere past 3,000 levels).
 */
export const maxJsonDepth = 1000;

export function valueTooDeep(): CharterError {
  return new CharterError(
    "VALUE_TOO_DEEP",
    `the value is nested more than ${maxJsonDepth} levels deep: it cannot be serialised, hashed or redacted`,
    { details: { maxDepth: maxJsonDepth } },
  );
}

/**
 * A copy of a JSON value whose objects list their keys in sorted order, or `unrepresentable` when
 * JSON.stringify could not reproduce that order: keys starting with a digit (engines list array-index keys
 * first) and `__proto__` (an accessor on ordinary objects).
 */
function sortedCopy(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== "object") {
    if (typeof value === "number" && !Number.isFinite(value)) return unrepresentable;
    if (typeof value === "bigint" || typeof value === "function" || typeof value === "symbol")
      return unrepresentable;
    return value;
  }
  if (depth >= maxJsonDepth) throw valueTooDeep();
  if (Array.isArray(value)) {
    const copy = new Array<unknown>(value.length);
    for (let index = 0; index < value.length; index++) {
      const item = value[index];
      const copied = item === undefined ? null : sortedCopy(item, depth + 1);
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
    const copied = sortedCopy(member, depth + 1);
    if (copied === unrepresentable) return unrepresentable;
    copy[key] = copied;
  }
  return copy;
}

function isInCanonicalOrder(value: unknown, depth: number): boolean {
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
  if (depth >= maxJsonDepth) throw valueTooDeep();
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const item = value[index];
      if (item !== undefined && !isInCanonicalOrder(item, depth + 1)) return false;
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
    if (member !== undefined && !isInCanonicalOrder(member, depth + 1)) return false;
  }
  return true;
}

function serialize(value: unknown, depth = 0): string {
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
  if (depth >= maxJsonDepth) throw valueTooDeep();
  if (Array.isArray(value)) {
    let out = "[";
    for (let index = 0; index < value.length; index++) {
      if (index > 0) out += ",";
      const item = value[index];
      out += item === undefined ? "null" : serialize(item, depth + 1);
    }
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  if (typeof (record as { toJSON?: unknown }).toJSON === "function") {
    return serialize((record as { toJSON: () => unknown }).toJSON(), depth + 1);
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
    out += `${JSON.stringify(key)}:${serialize(member, depth + 1)}`;
  }
  return `${out}}`;
}
