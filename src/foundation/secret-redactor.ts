import { maxJsonDepth, valueTooDeep } from "./canonical-json.js";

/**
 * Keys whose values are credentials whatever they contain, compared case-insensitively.
 * `api_key` and `set-cookie` are the same credentials under their other common spellings.
 */
const sensitiveKeys: ReadonlySet<string> = new Set([
  "authorization",
  "proxy-authorization",
  "api-key",
  "apikey",
  "api_key",
  "x-api-key",
  "cookie",
  "set-cookie",
]);

// Checking the length first keeps the common key (not sensitive) free of a lower-casing allocation.
const sensitiveKeyLengths: ReadonlySet<number> = new Set([...sensitiveKeys].map((key) => key.length));

/** Secrets shorter than this would redact ordinary words and numbers, so they are not registered. */
const minimumSecretLength = 4;

/**
 * Removes registered secret values (and the values of credential-bearing keys) from strings and JSON-like
 * values before they reach a transcript, a hash or a file. Each occurrence becomes `[REDACTED:<label>]`.
 *
 * All secrets are matched by one combined regular expression, rebuilt only when a secret is added, so the
 * cost per string is one scan whatever the number of secrets, and nothing at all when there are none.
 */
export class SecretRedactor {
  // Every form a secret is matched in (as given, JSON-escaped, URL-encoded) -> its label.
  readonly #labels = new Map<string, string>();
  #pattern: RegExp | null = null;
  #patternIsStale = false;
  readonly #replace = (match: string): string => `[REDACTED:${this.#labels.get(match) ?? "secret"}]`;

  /** Registers a secret; values shorter than four characters are ignored (they would redact ordinary text). */
  addSecret(value: string, label: string): void {
    if (typeof value !== "string" || value.length < minimumSecretLength) return;
    // A secret also reaches payloads inside JSON-encoded strings (tool arguments) and URLs (query parameters).
    const forms = new Set([value, JSON.stringify(value).slice(1, -1), safeEncodeUriComponent(value)]);
    for (const form of forms) {
      if (form === null || form.length < minimumSecretLength) continue;
      this.#labels.set(form, label);
    }
    this.#patternIsStale = true;
  }

  /** How many distinct secret forms are registered. */
  get secretCount(): number {
    return this.#labels.size;
  }

  /** Replaces every registered secret in the text; returns the same string when there is none. */
  redactString(text: string): string {
    const pattern = this.#currentPattern();
    if (pattern === null) return text;
    pattern.lastIndex = 0;
    // `search` scans without building a new string; most texts contain no secret.
    if (text.search(pattern) === -1) return text;
    return text.replace(pattern, this.#replace);
  }

  /**
   * Redacts a JSON-like value deeply: registered secrets inside strings, and the whole string value of any
   * credential-bearing key (authorization, api-key, apiKey, x-api-key, proxy-authorization, cookie...).
   * Returns the same value (same object identity) when nothing changed; otherwise a copy of only the
   * objects and arrays on the path to each change.
   */
  redactValue(value: unknown): unknown {
    return this.#redactNode(value, this.#currentPattern(), true, 0);
  }

  /**
   * Redacts registered secrets deeply, leaving credential-bearing keys as they are: for records that must be
   * read back exactly (a checkpoint, a stored tool result a resumed run answers a call with), where a tool's own
   * argument named `authorization` is data the run needs, while a registered secret never is.
   */
  redactSecrets(value: unknown): unknown {
    const pattern = this.#currentPattern();
    return pattern === null ? value : this.#redactNode(value, pattern, false, 0);
  }

  /**
   * A redactor for text that arrives in pieces (a streamed answer): `push` returns what can be shown now, holding
   * back a tail that could be the start of a registered secret, and `flush` returns the rest once the text is
   * complete. A secret split across pieces is therefore redacted whole, never shown in part.
   */
  createStreamRedactor(): { push(text: string): string; flush(): string } {
    let pending = "";
    return {
      push: (text) => {
        pending += text;
        const pattern = this.#currentPattern();
        if (pattern === null) {
          const shown = pending;
          pending = "";
          return shown;
        }
        const cut = this.#heldTailStart(pending, pattern);
        const shown = this.redactString(pending.slice(0, cut));
        pending = pending.slice(cut);
        return shown;
      },
      flush: () => {
        const shown = this.redactString(pending);
        pending = "";
        return shown;
      },
    };
  }

  /** Where the tail that could still grow into a secret starts: after every complete match, at the earliest proper prefix. */
  #heldTailStart(text: string, pattern: RegExp): number {
    let afterMatches = 0;
    pattern.lastIndex = 0;
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
      afterMatches = match.index + match[0].length;
      if (match[0].length === 0) pattern.lastIndex++;
    }
    pattern.lastIndex = 0;
    let longest = 0;
    for (const form of this.#labels.keys()) longest = Math.max(longest, form.length);
    for (let start = Math.max(afterMatches, text.length - longest + 1); start < text.length; start++) {
      const tail = text.slice(start);
      for (const form of this.#labels.keys()) {
        if (form.length > tail.length && form.startsWith(tail)) return start;
      }
    }
    return text.length;
  }

  /**
   * Whether a registered secret occurs in any string value (keys are names, not data). Credential-bearing
   * keys are not considered: this asks whether a value that must be kept exactly carries a secret.
   */
  containsSecret(value: unknown): boolean {
    const pattern = this.#currentPattern();
    return pattern !== null && this.#containsSecret(value, pattern);
  }

  #currentPattern(): RegExp | null {
    if (this.#patternIsStale) {
      this.#patternIsStale = false;
      // Longest first, so that a secret which extends another is replaced whole.
      const forms = [...this.#labels.keys()].sort((left, right) => right.length - left.length);
      this.#pattern =
        forms.length === 0 ? null : new RegExp(forms.map(escapeRegularExpression).join("|"), "g");
    }
    return this.#pattern;
  }

  #redactNode(value: unknown, pattern: RegExp | null, credentialKeys: boolean, depth: number): unknown {
    if (typeof value === "string") return pattern === null ? value : this.redactString(value);
    if (value === null || typeof value !== "object") return value;
    // Bounded like the canonical serialiser, so a hostile payload is refused instead of exhausting the stack.
    if (depth >= maxJsonDepth) throw valueTooDeep();
    if (Array.isArray(value)) return this.#redactArray(value, pattern, credentialKeys, depth + 1);
    // Serialisation goes through toJSON (dates, errors), so redaction must see what it returns.
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") {
      const serialised: unknown = toJSON.call(value);
      const redacted = this.#redactNode(serialised, pattern, credentialKeys, depth + 1);
      return redacted === serialised ? value : redacted;
    }
    return this.#redactRecord(value as Record<string, unknown>, pattern, credentialKeys, depth + 1);
  }

  #redactArray(
    items: readonly unknown[],
    pattern: RegExp | null,
    credentialKeys: boolean,
    depth: number,
  ): unknown {
    let copy: unknown[] | null = null;
    for (let index = 0; index < items.length; index++) {
      const item = items[index];
      const redacted = this.#redactNode(item, pattern, credentialKeys, depth);
      if (redacted !== item) {
        copy ??= items.slice();
        copy[index] = redacted;
      }
    }
    return copy ?? items;
  }

  #redactRecord(
    record: Record<string, unknown>,
    pattern: RegExp | null,
    credentialKeys: boolean,
    depth: number,
  ): unknown {
    let copy: Record<string, unknown> | null = null;
    for (const key in record) {
      if (!Object.hasOwn(record, key)) continue;
      const member = record[key];
      const redacted =
        credentialKeys && sensitiveKeyLengths.has(key.length) && sensitiveKeys.has(key.toLowerCase())
          ? redactCredential(member, key, () => this.#redactNode(member, pattern, credentialKeys, depth))
          : this.#redactNode(member, pattern, credentialKeys, depth);
      // A secret can be a key too (a map keyed by token, say); redacting it keeps the member.
      const redactedKey = pattern === null ? key : this.redactString(key);
      if (copy === null && (redacted !== member || redactedKey !== key)) {
        copy = {};
        // The members before this one are unchanged; copying them first keeps the key order.
        for (const earlier in record) {
          if (earlier === key) break;
          if (Object.hasOwn(record, earlier)) defineMember(copy, earlier, record[earlier]);
        }
      }
      if (copy !== null) defineMember(copy, redactedKey, redacted);
    }
    return copy ?? record;
  }

  #containsSecret(value: unknown, pattern: RegExp, depth = 0): boolean {
    if (typeof value === "string") return value.search(pattern) !== -1;
    if (value === null || typeof value !== "object") return false;
    if (depth >= maxJsonDepth) throw valueTooDeep();
    if (Array.isArray(value)) return value.some((item) => this.#containsSecret(item, pattern, depth + 1));
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") return this.#containsSecret(toJSON.call(value), pattern, depth + 1);
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      if (this.#containsSecret((value as Record<string, unknown>)[key], pattern, depth + 1)) return true;
    }
    return false;
  }
}

// Defined rather than assigned, so that a key such as `__proto__` stays an ordinary member.
function defineMember(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * The value of a credential-bearing key: strings (and lists of strings, as `set-cookie` headers are) are
 * replaced whole. Other values are only scanned for registered secrets, because an object under such a
 * key is structure, not a credential (a JSON schema property named `apiKey`, for example).
 */
function redactCredential(member: unknown, key: string, scan: () => unknown): unknown {
  if (typeof member === "string") return member === "" ? member : `[REDACTED:${key.toLowerCase()}]`;
  if (Array.isArray(member) && member.length > 0 && member.every((item) => typeof item === "string")) {
    return member.map(() => `[REDACTED:${key.toLowerCase()}]`);
  }
  return scan();
}

function escapeRegularExpression(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&");
}

function safeEncodeUriComponent(text: string): string | null {
  try {
    return encodeURIComponent(text);
  } catch {
    // Lone surrogates cannot be URL-encoded; such a secret can only appear in its raw form.
    return null;
  }
}
