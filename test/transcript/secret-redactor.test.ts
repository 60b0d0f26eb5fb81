import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SecretRedactor } from "../../src/foundation/secret-redactor.js";

describe("SecretRedactor.redactString", () => {
  it("replaces every occurrence of a secret with its label", () => {
    const redactor = new SecretRedactor();
    redactor.addSecret("sk-live-123456", "OPENAI_API_KEY");
    expect(redactor.redactString("key=sk-live-123456; again sk-live-123456.")).toBe(
      "key=[REDACTED:OPENAI_API_KEY]; again [REDACTED:OPENAI_API_KEY].",
    );
  });

  it("returns the very same string when nothing matches, with or without secrets", () => {
    const text = "nothing secret here";
    expect(new SecretRedactor().redactString(text)).toBe(text);
    const redactor = new SecretRedactor();
    redactor.addSecret("hunter22", "PASSWORD");
    expect(redactor.redactString(text)).toBe(text);
  });

  it("ignores secrets shorter than four characters", () => {
    const redactor = new SecretRedactor();
    redactor.addSecret("abc", "SHORT");
    redactor.addSecret("", "EMPTY");
    expect(redactor.secretCount).toBe(0);
    expect(redactor.redactString("abc abc")).toBe("abc abc");
  });

  it("replaces a longer secret whole when a shorter one is its prefix", () => {
    const redactor = new SecretRedactor();
    redactor.addSecret("token", "SHORT_TOKEN");
    redactor.addSecret("token-extended", "LONG_TOKEN");
    expect(redactor.redactString("a token-extended b token c")).toBe(
      "a [REDACTED:LONG_TOKEN] b [REDACTED:SHORT_TOKEN] c",
    );
  });

  it("treats regular-expression characters in secrets literally", () => {
    const redactor = new SecretRedactor();
    redactor.addSecret("a.b*c+(d)[e]{f}|g^h$i\\j/k?", "WEIRD");
    expect(redactor.redactString("x a.b*c+(d)[e]{f}|g^h$i\\j/k? y")).toBe("x [REDACTED:WEIRD] y");
    expect(redactor.redactString("aXb*c+(d)[e]{f}|g^h$i\\j/k?")).toBe("aXb*c+(d)[e]{f}|g^h$i\\j/k?");
  });

  it("also finds a secret JSON-escaped inside an encoded string and URL-encoded in a query", () => {
    const redactor = new SecretRedactor();
    const secret = 'pa"ss/wo rd\\1';
    redactor.addSecret(secret, "DB_PASSWORD");
    const encodedArguments = JSON.stringify({ password: secret });
    expect(redactor.redactString(encodedArguments)).not.toContain('pa\\"ss');
    expect(redactor.redactString(encodedArguments)).toContain("[REDACTED:DB_PASSWORD]");
    const url = `https://example.test/?p=${encodeURIComponent(secret)}`;
    expect(redactor.redactString(url)).toBe("https://example.test/?p=[REDACTED:DB_PASSWORD]");
  });

  it("takes secrets added after first use into account", () => {
    const redactor = new SecretRedactor();
    expect(redactor.redactString("later-secret")).toBe("later-secret");
    redactor.addSecret("later-secret", "LATER");
    expect(redactor.redactString("later-secret")).toBe("[REDACTED:LATER]");
  });

  it("never leaves a registered secret in any text (property)", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 4, maxLength: 24 }),
        fc.array(fc.string({ maxLength: 12 }), { maxLength: 6 }),
        (secret, pieces) => {
          const redactor = new SecretRedactor();
          redactor.addSecret(secret, "S");
          const text = pieces.join(secret);
          const redacted = redactor.redactString(text);
          // A secret made only of label characters could reappear inside the replacement itself.
          fc.pre(!"[REDACTED:S]".includes(secret));
          expect(redacted.includes(secret)).toBe(false);
        },
      ),
    );
  });
});

describe("SecretRedactor.redactValue", () => {
  it("returns the same object when nothing needs redacting", () => {
    const redactor = new SecretRedactor();
    redactor.addSecret("s3cr3t-value", "SECRET");
    const value = { a: [1, "two", { three: null }], b: { c: true }, when: new Date(0) };
    expect(redactor.redactValue(value)).toBe(value);
    expect(new SecretRedactor().redactValue(value)).toBe(value);
  });

  it("copies only the objects on the path to a change and leaves the input untouched", () => {
    const redactor = new SecretRedactor();
    redactor.addSecret("s3cr3t-value", "SECRET");
    const untouched = { deep: { list: [1, 2, 3] } };
    const value = { keep: untouched, change: { list: ["x", "the s3cr3t-value here"] } };
    const redacted = redactor.redactValue(value) as typeof value;
    expect(redacted).not.toBe(value);
    expect(redacted.keep).toBe(untouched);
    expect(redacted.change.list).toEqual(["x", "the [REDACTED:SECRET] here"]);
    expect(value.change.list[1]).toBe("the s3cr3t-value here");
  });

  it("redacts the values of credential-bearing keys whatever their case, without any registered secret", () => {
    const redactor = new SecretRedactor();
    const headers = {
      Authorization: "Bearer abc",
      "PROXY-AUTHORIZATION": "Basic xyz",
      "api-key": "k1",
      apiKey: "k2",
      "X-Api-Key": "k3",
      Cookie: "session=1",
      "set-cookie": ["a=1", "b=2"],
      "content-type": "application/json",
      empty: "",
    };
    expect(redactor.redactValue({ headers })).toEqual({
      headers: {
        Authorization: "[REDACTED:authorization]",
        "PROXY-AUTHORIZATION": "[REDACTED:proxy-authorization]",
        "api-key": "[REDACTED:api-key]",
        apiKey: "[REDACTED:apikey]",
        "X-Api-Key": "[REDACTED:x-api-key]",
        Cookie: "[REDACTED:cookie]",
        "set-cookie": ["[REDACTED:set-cookie]", "[REDACTED:set-cookie]"],
        "content-type": "application/json",
        empty: "",
      },
    });
  });

  it("keeps structure under a credential-bearing key (a JSON schema property named apiKey)", () => {
    const redactor = new SecretRedactor();
    const schema = { type: "object", properties: { apiKey: { type: "string", description: "the key" } } };
    expect(redactor.redactValue(schema)).toBe(schema);
  });

  it("redacts what serialisation would see through toJSON", () => {
    const redactor = new SecretRedactor();
    redactor.addSecret("s3cr3t-value", "SECRET");
    const error = { toJSON: () => ({ message: "failed with s3cr3t-value" }) };
    expect(redactor.redactValue({ error })).toEqual({ error: { message: "failed with [REDACTED:SECRET]" } });
  });

  it("redacts a secret used as a key, keeping the key order and the member", () => {
    const redactor = new SecretRedactor();
    redactor.addSecret("tok-9f8e7d", "TOKEN");
    const value = { first: 1, "tok-9f8e7d": { user: "ann" }, last: 3 };
    const redacted = redactor.redactValue(value) as Record<string, unknown>;
    expect(Object.keys(redacted)).toEqual(["first", "[REDACTED:TOKEN]", "last"]);
    expect(redacted["[REDACTED:TOKEN]"]).toBe(value["tok-9f8e7d"]);
  });

  it("keeps a __proto__ key an ordinary member when copying", () => {
    const redactor = new SecretRedactor();
    redactor.addSecret("s3cr3t-value", "SECRET");
    const value = JSON.parse('{"__proto__":{"polluted":true},"note":"s3cr3t-value"}') as Record<
      string,
      unknown
    >;
    const redacted = redactor.redactValue(value) as Record<string, unknown>;
    expect(Object.keys(redacted)).toEqual(["__proto__", "note"]);
    expect(Object.getPrototypeOf(redacted)).toBe(Object.prototype);
    expect(redacted.note).toBe("[REDACTED:SECRET]");
  });

  it("tells whether a value carries a secret in any string value", () => {
    const redactor = new SecretRedactor();
    expect(redactor.containsSecret({ a: "anything" })).toBe(false);
    redactor.addSecret("s3cr3t-value", "SECRET");
    expect(redactor.containsSecret({ a: ["x", { b: "has s3cr3t-value" }] })).toBe(true);
    expect(redactor.containsSecret({ "s3cr3t-value": "name only", authorization: "Bearer x" })).toBe(false);
  });

  it("leaves non-string leaves alone", () => {
    const redactor = new SecretRedactor();
    redactor.addSecret("1234", "DIGITS");
    expect(redactor.redactValue({ n: 1234, b: false, u: undefined })).toEqual({
      n: 1234,
      b: false,
      u: undefined,
    });
  });
});

describe("SecretRedactor.createStreamRedactor", () => {
  it("never shows part of a secret split across pieces, and shows everything once the text is complete", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 40 }),
        fc.string({ maxLength: 40 }),
        fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 30 }),
        (before, after, sizes) => {
          const secret = "sk-stream-secret-1234";
          const redactor = new SecretRedactor();
          redactor.addSecret(secret, "KEY");
          const text = `${before}${secret}${after}${secret.slice(0, 7)}`;
          const stream = redactor.createStreamRedactor();
          let shown = "";
          let offset = 0;
          for (let index = 0; offset < text.length; index++) {
            const size = sizes[index % sizes.length]!;
            shown += stream.push(text.slice(offset, offset + size));
            offset += size;
            // Whatever has been shown so far never ends with the start of the secret (it could be completed later).
            expect(shown.includes(secret)).toBe(false);
          }
          shown += stream.flush();
          expect(shown).toBe(redactor.redactString(text));
        },
      ),
    );
  });
});

describe("SecretRedactor.redactSecrets", () => {
  it("redacts registered secrets deeply but keeps the values of credential-bearing keys", () => {
    const redactor = new SecretRedactor();
    redactor.addSecret("sk-registered-99", "KEY");
    const value = { arguments: { authorization: "model-made", note: "uses sk-registered-99" } };
    expect(redactor.redactSecrets(value)).toEqual({
      arguments: { authorization: "model-made", note: "uses [REDACTED:KEY]" },
    });
    expect(redactor.redactValue(value)).toEqual({
      arguments: { authorization: "[REDACTED:authorization]", note: "uses [REDACTED:KEY]" },
    });
  });
});
