import { columnHeads } from "./column-heads.js";
import { append, type Child, element } from "./element.js";

/** Link targets a report may have: the web and mail. `javascript:`, `data:` and the rest stay text. */
const safeLink = /^(https?:\/\/|mailto:)/i;

/**
 * Renders Markdown (a run's final report: text a model wrote, so untrusted) as DOM nodes: headings, paragraphs,
 * lists, block quotes, fenced code, tables, rules, and inline code, emphasis and links. It builds elements and
 * text nodes only; HTML in the text is shown as the text it is, never parsed, and links go only to http(s) or
 * mailto addresses, opened without the page as referrer or opener.
 */
export function renderMarkdown(text: string): DocumentFragment {
  const fragment = document.createDocumentFragment();
  const lines = text.replaceAll("\r\n", "\n").split("\n");
  let index = 0;
  const at = (offset = 0) => lines[index + offset] ?? "";
  while (index < lines.length) {
    const line = at();
    if (line.trim() === "") {
      index += 1;
      continue;
    }
    const fence = /^\s*(```|~~~)\s*([\w+-]*)/.exec(line);
    if (fence !== null) {
      const body: string[] = [];
      index += 1;
      while (
        index < lines.length &&
        !at()
          .trim()
          .startsWith(fence[1] as string)
      ) {
        body.push(at());
        index += 1;
      }
      index += 1;
      const code = element("code", fence[2] ? { "data-language": fence[2] } : {}, body.join("\n"));
      fragment.appendChild(element("pre", {}, code));
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading !== null) {
      // A report's headings sit under the page's own: the highest a report gets is h3.
      const level = Math.min(6, (heading[1] as string).length + 2);
      fragment.appendChild(element(`h${level}` as "h3", {}, inline(heading[2] as string)));
      index += 1;
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      fragment.appendChild(element("hr"));
      index += 1;
      continue;
    }
    if (/^\s*>/.test(line)) {
      const quoted: string[] = [];
      while (index < lines.length && /^\s*>/.test(at())) {
        quoted.push(at().replace(/^\s*>\s?/, ""));
        index += 1;
      }
      const quote = element("blockquote");
      quote.appendChild(renderMarkdown(quoted.join("\n")));
      fragment.appendChild(quote);
      continue;
    }
    if (line.includes("|") && /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/.test(at(1))) {
      const header = cells(line);
      index += 2;
      const rows: string[][] = [];
      while (index < lines.length && at().includes("|") && at().trim() !== "") {
        rows.push(cells(at()));
        index += 1;
      }
      fragment.appendChild(
        element(
          "table",
          {},
          columnHeads(header.map((cell) => inline(cell))),
          element(
            "tbody",
            {},
            rows.map((row) =>
              element(
                "tr",
                {},
                row.map((cell) => element("td", {}, inline(cell))),
              ),
            ),
          ),
        ),
      );
      continue;
    }
    const listItem = /^\s*([-*+]|\d+[.)])\s+/;
    if (listItem.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const list = element(ordered ? "ol" : "ul");
      while (index < lines.length && listItem.test(at())) {
        const item: string[] = [at().replace(listItem, "")];
        index += 1;
        // Continuation lines (indented, not a new item) belong to the item.
        while (index < lines.length && /^\s{2,}\S/.test(at()) && !listItem.test(at())) {
          item.push(at().trim());
          index += 1;
        }
        list.appendChild(element("li", {}, inline(item.join(" "))));
      }
      fragment.appendChild(list);
      continue;
    }
    const paragraph: string[] = [];
    while (
      index < lines.length &&
      at().trim() !== "" &&
      !/^(#{1,6}\s|\s*```|\s*~~~|\s*>|\s*([-*+]|\d+[.)])\s)/.test(at())
    ) {
      paragraph.push(at().trim());
      index += 1;
    }
    if (paragraph.length === 0) {
      // A line no block rule took (it looked like the start of one but was not): shown as a paragraph.
      paragraph.push(line.trim());
      index += 1;
    }
    fragment.appendChild(element("p", {}, inline(paragraph.join(" "))));
  }
  return fragment;
}

function cells(line: string): string[] {
  return line
    .trim()
    .replace(/^\|/, "")
    .replace(/\|$/, "")
    .split("|")
    .map((cell) => cell.trim());
}

/** Inline Markdown: `code`, **strong**, *emphasis* (or _), [links](https://...); everything else is text. */
export function inline(text: string): Child[] {
  const out: Child[] = [];
  const pattern =
    /`([^`]+)`|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|_([^_\s][^_]*)_|\[([^\]]+)\]\(([^)\s]+)\)/g;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    const start = match.index ?? 0;
    if (start > last) out.push(text.slice(last, start));
    if (match[1] !== undefined) out.push(element("code", {}, match[1]));
    else if (match[2] !== undefined || match[3] !== undefined) {
      out.push(element("strong", {}, inline((match[2] ?? match[3]) as string)));
    } else if (match[4] !== undefined || match[5] !== undefined) {
      out.push(element("em", {}, inline((match[4] ?? match[5]) as string)));
    } else {
      const label = match[6] as string;
      const href = match[7] as string;
      if (safeLink.test(href)) {
        out.push(
          element("a", { href, rel: "noopener noreferrer nofollow", target: "_blank" }, inline(label)),
        );
      } else out.push(match[0]);
    }
    last = start + match[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** A report that is JSON (or anything else not Markdown text) is shown formatted, as text. */
export function renderReport(report: unknown): DocumentFragment {
  const fragment = document.createDocumentFragment();
  const asObject = typeof report === "object" && report !== null ? (report as Record<string, unknown>) : null;
  const content = asObject !== null && "content" in asObject ? asObject.content : report;
  const format = asObject !== null && typeof asObject.format === "string" ? asObject.format : null;
  if (typeof content === "string" && format !== "json") append(fragment, [renderMarkdown(content)]);
  else {
    let shown = content;
    if (typeof content === "string") {
      try {
        shown = JSON.parse(content);
      } catch {
        shown = content;
      }
    }
    fragment.appendChild(
      element(
        "pre",
        { class: "json" },
        element("code", {}, typeof shown === "string" ? shown : JSON.stringify(shown, null, 2)),
      ),
    );
  }
  return fragment;
}
