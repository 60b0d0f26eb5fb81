import { describe, expect, it } from "vitest";
import { mcpContentToText } from "../../src/tools/sources/mcp-content-to-text.js";

describe("mcpContentToText", () => {
  it("joins text parts with newlines and describes other parts as short JSON", () => {
    const text = mcpContentToText({
      content: [
        { type: "text", text: "first" },
        { type: "image", data: "AAAA", mimeType: "image/png" },
        { type: "resource_link", uri: "file:///a.txt", name: "a.txt" },
        { type: "resource", resource: { uri: "file:///b.txt", mimeType: "text/plain", text: "inside b" } },
        { type: "resource", resource: { uri: "file:///c.bin", blob: "AAAAAA==" } },
        { type: "text", text: "last" },
      ],
    });
    expect(text.split("\n")).toEqual([
      "first",
      '{"type":"image","mimeType":"image/png","bytes":3}',
      '{"type":"resource_link","uri":"file:///a.txt","name":"a.txt"}',
      '{"type":"resource","uri":"file:///b.txt","mimeType":"text/plain"}',
      "inside b",
      '{"type":"resource","uri":"file:///c.bin","bytes":4}',
      "last",
    ]);
  });

  it("falls back to structured content, then to the legacy toolResult", () => {
    expect(mcpContentToText({ content: [], structuredContent: { total: 3 } })).toBe('{"total":3}');
    expect(mcpContentToText({ toolResult: { legacy: true } })).toBe('{"legacy":true}');
    expect(mcpContentToText({ content: [] })).toBe("");
  });
});
