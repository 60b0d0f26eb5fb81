// What the examples of docs/store.md import as "charter": the package's entry point, plus the store's exports
// (until the entry point exports them itself; explicit exports here take precedence over `export *`).
export * from "../../src/index.js";
export { openRunStore } from "../../src/store/open-run-store.js";
export { createStoreTranscriptWriter } from "../../src/store/store-transcript-writer.js";
export { toolRequestHash } from "../../src/store/tool-request-hash.js";
export { verifyStoredRun } from "../../src/store/verify-stored-run.js";
export { createHashChainTranscript } from "../../src/transcript/hash-chain-transcript.js";
