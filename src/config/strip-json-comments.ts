/**
 * JSON with comments (JSONC, as editors and tsconfig.json accept it): `// line` and `/* block *\/` comments are
 * replaced by spaces outside strings, newlines kept, so that JSON.parse's positions still point at the right
 * line and column of the file. Trailing commas are not accepted: the rest is plain JSON.
 */
export function stripJsonComments(text: string): string {
  let out = "";
  let index = 0;
  let inString = false;
  while (index < text.length) {
    const character = text[index]!;
    const next = text[index + 1];
    if (inString) {
      out += character;
      if (character === "\\" && next !== undefined) {
        out += next;
        index += 2;
        continue;
      }
      if (character === '"') inString = false;
      index++;
      continue;
    }
    if (character === '"') {
      inString = true;
      out += character;
      index++;
      continue;
    }
    if (character === "/" && next === "/") {
      while (index < text.length && text[index] !== "\n") {
        out += " ";
        index++;
      }
      continue;
    }
    if (character === "/" && next === "*") {
      const end = text.indexOf("*/", index + 2);
      const stop = end === -1 ? text.length : end + 2;
      for (; index < stop; index++) out += text[index] === "\n" ? "\n" : " ";
      continue;
    }
    out += character;
    index++;
  }
  return out;
}
