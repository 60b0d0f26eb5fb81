import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
// docs/architecture.md is for maintainers and maps behaviour to the specification; every other page is for users.
const userDocuments = [
  "README.md",
  ...readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md") && name !== "architecture.md")
    .map((name) => `docs/${name}`),
];
const specificationIds = [
  /\bseed[ -]?\d{3}\b/i,
  /\bINV-[A-Z]+-\d+/,
  /§\s*\d/,
  /\bpredicate \d/i,
  /\bPhase \d[a-z]?\b/,
  /\bInvariant [A-Z]\b/,
];

describe("user documentation", () => {
  it.each(userDocuments)("%s speaks of behaviour, without specification ids", (path) => {
    const lines = readFileSync(join(root, path), "utf8").split("\n");
    const found = lines.flatMap((line, index) =>
      specificationIds.some((pattern) => pattern.test(line)) ? [`${path}:${index + 1}: ${line.trim()}`] : [],
    );
    expect(found).toEqual([]);
  });

  it("the README opens with exactly two set-up commands: install and demo, then the test suite", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const firstBlock = /```bash\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
    const commands = firstBlock
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => line.replace(/#.*$/, "").trim());
    expect(commands).toEqual(["npm install && npm run demo", "npm test"]);
  });

  it("the README links the tutorial and the examples", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    expect(readme).toContain("(docs/tutorial.md)");
    expect(readme).toContain("(examples/README.md)");
  });
});
