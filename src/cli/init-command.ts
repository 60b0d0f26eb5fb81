import { appendFile, mkdir, readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { CliStreams } from "./cli-streams.js";
import { defineCommand, type FlagValues } from "./command-declaration.js";
import { exitCodes } from "./exit-code.js";
import { initAgent, initConfiguration, initIgnoredPaths } from "./init-files.js";

const flags = {} as const;

/** `charter init [DIR]`: a commented configuration, an example agent and .gitignore entries; never overwrites. */
export const initCommand = defineCommand({
  name: "init",
  summary: "Write a commented .charter.json, an example agent and .gitignore entries into a folder",
  description:
    "Writes .charter.json (JSON with comments explaining each key), agent.md (an example agent) and adds .charter.env (where API keys go) and .charter/ (a local run store) to .gitignore. A file that exists already is never overwritten: it is reported as skipped, and only missing lines are added to an existing .gitignore. Then edit the provider in .charter.json and check the setup with charter doctor agent.md.",
  positionals: [{ name: "DIR", optional: true, description: "The folder to set up (created if missing)." }],
  flags,
  examples: ["charter init", "charter init my-agent && cd my-agent && charter doctor agent.md"],
  run: initFolder,
});

async function initFolder(
  positionals: readonly string[],
  _values: FlagValues<typeof flags>,
  streams: CliStreams,
): Promise<number> {
  const directory = resolve(positionals[0] ?? ".");
  await mkdir(directory, { recursive: true });
  for (const [name, content] of [
    [".charter.json", initConfiguration],
    ["agent.md", initAgent],
  ] as const) {
    const path = join(directory, name);
    // "wx": created only if absent, in one step, so nothing the user wrote is ever replaced.
    const written = await writeFile(path, content, { flag: "wx" }).then(
      () => true,
      (error: NodeJS.ErrnoException) => {
        if (error.code === "EEXIST") return false;
        throw error;
      },
    );
    streams.stdout.write(written ? `wrote   ${path}\n` : `skipped ${path} (it exists; left unchanged)\n`);
  }
  const ignorePath = join(directory, ".gitignore");
  const existing = await readFile(ignorePath, "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return null;
    throw error;
  });
  const present = new Set((existing ?? "").split(/\r?\n/).map((line) => line.trim()));
  const missing = initIgnoredPaths.filter((line) => !present.has(line));
  if (missing.length === 0)
    streams.stdout.write(`skipped ${ignorePath} (already ignores ${initIgnoredPaths.join(", ")})\n`);
  else {
    const separator = existing === null || existing === "" || existing.endsWith("\n") ? "" : "\n";
    const block = `${separator}# Charter: API keys (.charter.env) and a local run store (.charter/)\n${missing.join("\n")}\n`;
    await appendFile(ignorePath, block);
    streams.stdout.write(
      `${existing === null ? "wrote  " : "updated"} ${ignorePath} (ignores ${missing.join(", ")})\n`,
    );
  }
  streams.stdout.write(
    "next: set the provider's baseUrl and model in .charter.json (keys go in .charter.env), then run: charter doctor agent.md\n",
  );
  return exitCodes.success;
}
