import { CharterError } from "../../foundation/charter-error.js";

/** Any `${parameters...}` text, well-formed or not: malformed ones are reported, never left to chance. */
const anyPlaceholder = /\$\{parameters\.([^}]*)\}/g;
const parameterPath = /^[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)*$/;
const wholePlaceholder = /^\$\{parameters\.([^}]*)\}$/;
const lineBreak = /[\r\n\0]/;

type Parameters = Readonly<Record<string, unknown>>;

/** Every parameter path the template's strings use, and any malformed placeholder found. */
export function placeholdersIn(template: unknown): { paths: string[]; malformed: string[] } {
  const paths = new Set<string>();
  const malformed: string[] = [];
  const visit = (value: unknown): void => {
    if (typeof value === "string") {
      for (const match of value.matchAll(anyPlaceholder)) {
        const path = match[1] ?? "";
        if (parameterPath.test(path)) paths.add(path);
        else malformed.push(match[0]);
      }
    } else if (Array.isArray(value)) {
      for (const item of value) visit(item);
    } else if (value !== null && typeof value === "object") {
      for (const member of Object.values(value)) visit(member);
    }
  };
  visit(template);
  return { paths: [...paths], malformed };
}

/** The value at a dotted path, reading own properties only; `undefined` when any step is missing. */
function valueAt(parameters: Parameters, path: string): unknown {
  let current: unknown = parameters;
  for (const segment of path.split(".")) {
    if (current === null || typeof current !== "object" || !Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

/** A value as text: strings as they are, absent or null as nothing, anything else as JSON. */
function asText(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  return JSON.stringify(value);
}

function replaceAll(template: string, parameters: Parameters, encode: (text: string) => string): string {
  if (!template.includes("${parameters.")) return template;
  return template.replace(anyPlaceholder, (_placeholder, path: string) =>
    encode(asText(valueAt(parameters, path))),
  );
}

/**
 * The URL with each placeholder replaced by its value, URL-encoded, so a value cannot add path or query parts.
 * A path segment that a value turns into `.` or `..` is refused (TOOL_PATH_TRAVERSAL): URL parsers remove such
 * segments, and their percent-encoded forms (`%2e`) too, so `/tenant/acme/${x}/${x}/items` with `x = ".."` would
 * reach `/items`. No encoding keeps such a segment, hence the refusal.
 */
export function expandUrl(template: string, parameters: Parameters): string {
  const expanded = replaceAll(template, parameters, encodeURIComponent);
  if (expanded === template) return expanded;
  // The placeholders' text holds no `?` or `#`, so the template's path ends where its first one is.
  const pathEnd = template.search(/[?#]/);
  const templatePath = pathEnd === -1 ? template : template.slice(0, pathEnd);
  for (const segment of templatePath.split("/")) {
    if (!segment.includes("${parameters.")) continue;
    const value = replaceAll(segment, parameters, encodeURIComponent);
    const dots = value.replace(/%2e/gi, ".");
    if (dots === "." || dots === "..") {
      throw new CharterError(
        "TOOL_PATH_TRAVERSAL",
        `a parameter makes the URL path segment '${segment}' the dot segment '${dots}', which would change the path outside it`,
        { details: { segment, value: dots } },
      );
    }
  }
  return expanded;
}

/** A header value with placeholders replaced; a value that would break the header apart is refused. */
export function expandHeader(name: string, template: string, parameters: Parameters): string {
  const value = replaceAll(template, parameters, (text) => text);
  if (lineBreak.test(value)) {
    throw new CharterError("TOOL_INPUT_INVALID", `the value for header '${name}' contains a line break`, {
      details: { header: name },
    });
  }
  return value;
}

const omitted = Symbol("omitted");

function expandValue(template: unknown, parameters: Parameters): unknown {
  if (typeof template === "string") {
    const whole = wholePlaceholder.exec(template);
    if (whole !== null) {
      const value = valueAt(parameters, whole[1] ?? "");
      return value === undefined ? omitted : value;
    }
    return replaceAll(template, parameters, (text) => text);
  }
  if (Array.isArray(template)) {
    return template.map((item) => {
      const value = expandValue(item, parameters);
      return value === omitted ? null : value;
    });
  }
  if (template !== null && typeof template === "object") {
    const expanded: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(template)) {
      const value = expandValue(member, parameters);
      if (value === omitted) continue;
      // defineProperty: a `__proto__` key in the template stays a plain key of the body.
      Object.defineProperty(expanded, key, { value, enumerable: true, writable: true, configurable: true });
    }
    return expanded;
  }
  return template;
}

/**
 * The body template with its placeholders filled. A string that is exactly one placeholder becomes the
 * parameter's JSON value (an absent one drops its object key, or is `null` in an array); placeholders inside
 * longer strings become text. Keys are never expanded.
 */
export function expandBody(template: unknown, parameters: Parameters): unknown {
  const value = expandValue(template, parameters);
  return value === omitted ? null : value;
}
