// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the files show configuration placeholders Charter expands.

/**
 * What `charter init` writes. The configuration is JSON with comments (Charter's loader accepts `//` and `/* *\/`
 * comments): the configuration schema refuses unknown keys such as `$comment`, and a comment beside each key
 * explains it where the user reads it.
 */
export const initConfiguration = `// Charter configuration: JSON with comments. Charter reads .charter.json from the working directory,
// the agent file's directory, ~/.charter/charter.json and /etc/charter/charter.json (see docs/configuration.md).
// "\${NAME}" in a value is replaced by the environment variable NAME, or by NAME from .charter.env beside this file
// (keep keys there: .charter.env is in .gitignore).
{
  "providers": {
    // One provider named "local": any OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio...).
    // Agents name its models as local/<model>. For OpenAI itself: "type": "openai", "apiKey": "\${OPENAI_API_KEY}".
    "local": {
      "type": "openai-compatible",
      "baseUrl": "http://127.0.0.1:11434/v1",
      // "apiKey": "\${LOCAL_API_KEY}",
      "models": {
        // The context window in tokens: Charter keeps every request within it.
        "qwen3:8b": { "contextWindow": 32768 }
      }
    }
  },
  // Tool servers. An MCP server's tools are offered to the model as <server>__<tool>; list them in an agent's
  // "tools". For example, the MCP filesystem server (run 'charter tools' to see what it offers):
  // "files": { "type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."] }
  "mcpServers": {},
  // Settings every agent gets unless its own file says otherwise (any agent frontmatter key).
  "defaults": {
    "maxTurns": 10
  }
  // To keep runs in this folder instead of ~/.charter/charter.db (.charter/ is in .gitignore):
  // , "store": { "path": ".charter/charter.db" }
}
`;

export const initAgent = `---
# The models to try, in order: provider/model from .charter.json.
models: [local/qwen3:8b]
# The tools the model may call: MCP servers (all their tools) or <server>__<tool>. None yet.
tools: []
# The most turns (model requests) the run may take.
maxTurns: 10
---
You are a careful assistant. Answer the user's question directly and say when you are not sure.
`;

/** The lines `charter init` makes sure .gitignore has. */
export const initIgnoredPaths: readonly string[] = [".charter.env", ".charter/"];
