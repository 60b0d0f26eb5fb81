import type { CreateMessageRequest } from "@modelcontextprotocol/sdk/types.js";

type Block = Readonly<Record<string, unknown>>;

function blockText(block: Block): string {
  if (block.type === "text" && typeof block.text === "string") return block.text;
  if (block.type === "image" || block.type === "audio") {
    const data = typeof block.data === "string" ? block.data : "";
    return `[${String(block.type)} ${String(block.mimeType ?? "")}, ${Math.floor((data.length * 3) / 4)} bytes of base64 data not shown]`;
  }
  return `[${String(block.type ?? "unknown")} content not shown]`;
}

/**
 * A sampling request's messages as one text prompt, one `User:` or `Assistant:` paragraph per message. Charter
 * serves sampling with a one-turn run on its own targets, so the server's conversation is read as a transcript;
 * images and audio are named, not sent (a server's media would otherwise reach any provider, accepted or not).
 */
export function samplingMessagesToText(messages: CreateMessageRequest["params"]["messages"]): string {
  return messages
    .map((message) => {
      const content = message.content as unknown;
      const blocks = (Array.isArray(content) ? content : [content]) as Block[];
      const speaker = message.role === "assistant" ? "Assistant" : "User";
      return `${speaker}: ${blocks.map(blockText).join("\n")}`;
    })
    .join("\n\n");
}
