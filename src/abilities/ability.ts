/**
 * An ability: shared knowledge in a Markdown file of the abilities folder. Its frontmatter names it (`id`) and says
 * which tasks it is for (`keywords`); its body is the knowledge, prepended to an agent's system prompt when the agent
 * names it (always, as a core ability, or when it matches the task).
 */
export interface Ability {
  readonly id: string;
  /** Words or phrases whose presence in a task makes the ability relevant to it. */
  readonly keywords: readonly string[];
  readonly description: string | null;
  /** The knowledge: the file's body, trimmed. */
  readonly content: string;
  /** BLAKE3 (hex) of `content`: what the contract records of it. */
  readonly contentHash: string;
  /** Absolute path of the file. */
  readonly file: string;
}

/** Every ability of one folder, by id. */
export interface AbilityLibrary {
  /** Absolute path of the folder. */
  readonly directory: string;
  /** False when the folder does not exist (the library is then empty). */
  readonly exists: boolean;
  readonly abilities: ReadonlyMap<string, Ability>;
}
