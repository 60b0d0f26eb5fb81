import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** An agent file's text: the frontmatter lines, then the system prompt. */
export function agentText(frontmatter: string, body = "You are a careful agent."): string {
  return `---\n${frontmatter}\n---\n${body}\n`;
}

/** A temporary project holding these files (paths relative to it, folders made as needed). */
export async function projectWith(files: Readonly<Record<string, string>>): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), "charter-agents-"));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(directory, path)), { recursive: true });
    await writeFile(join(directory, path), text);
  }
  return directory;
}
