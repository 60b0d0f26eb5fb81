// What `require("charter")` loads (package.json "exports", the "require" condition). Charter is an ES module,
// and its module graph awaits at its top level (the BLAKE3 WebAssembly instance is created once, at load), which
// Node's require() cannot load even where it loads ES modules (Node >= 22.12 fails with
// ERR_REQUIRE_ASYNC_MODULE, older Nodes with ERR_REQUIRE_ESM). So this file raises a CharterError-shaped error
// instead, with the way to load Charter from CommonJS. It is CommonJS and imports nothing from the package: an
// ES module cannot be loaded here. `CharterError.isInstance` recognises it by the same registered brand.
const brand = Symbol.for("charter.error");

class CharterRequireError extends Error {
  readonly [brand] = true;
  readonly code = "REQUIRE_UNSUPPORTED";
  readonly isRetryable = false;
  readonly details = Object.freeze({ package: "charter", use: 'import("charter")' });

  constructor() {
    super(
      'charter is an ES module and cannot be loaded with require(). In an ES module, use `import { prepareAgent } from "charter"`; ' +
        'from CommonJS, load it asynchronously: `const { prepareAgent } = await import("charter")` inside an async function.',
    );
    this.name = "CharterError";
  }

  toJSON(): { code: string; message: string; details: Readonly<Record<string, unknown>> } {
    return { code: this.code, message: this.message, details: this.details };
  }
}

throw new CharterRequireError();
