/** Where a JSON text first stops being valid JSON: 0-based offset, 1-based line and column. */
export interface JsonSyntaxErrorLocation {
  readonly position: number;
  readonly line: number;
  readonly column: number;
}

class SyntaxStop {
  constructor(readonly position: number) {}
}

/**
 * Finds the offset of the first JSON syntax error (RFC 8259), so that a rejected tool call can tell the
 * model exactly where its arguments broke. Only called after `JSON.parse` failed, so it favours clarity
 * over speed. Returns the end of the text when it finds no error, which for text that `JSON.parse`
 * rejected means the text ended too early.
 */
export function locateJsonSyntaxError(text: string): JsonSyntaxErrorLocation {
  let position: number;
  try {
    let index = skipWhitespace(text, 0);
    index = value(text, index, 0);
    index = skipWhitespace(text, index);
    position = Math.min(index, text.length);
  } catch (stop) {
    if (!(stop instanceof SyntaxStop)) throw stop;
    position = stop.position;
  }
  let line = 1;
  let lineStart = 0;
  for (let index = 0; index < position; index++) {
    if (text.charCodeAt(index) === 10) {
      line++;
      lineStart = index + 1;
    }
  }
  return { position, line, column: position - lineStart + 1 };
}

// The scan recurses; beyond this depth it stops and reports where, rather than overflow the stack.
const maximumDepth = 1_000;

function skipWhitespace(text: string, start: number): number {
  let index = start;
  while (index < text.length) {
    const code = text.charCodeAt(index);
    if (code !== 32 && code !== 9 && code !== 10 && code !== 13) break;
    index++;
  }
  return index;
}

function value(text: string, start: number, depth: number): number {
  if (depth > maximumDepth) throw new SyntaxStop(start);
  const character = text[start];
  switch (character) {
    case "{":
      return object(text, start, depth);
    case "[":
      return array(text, start, depth);
    case '"':
      return string(text, start);
    case "t":
      return literal(text, start, "true");
    case "f":
      return literal(text, start, "false");
    case "n":
      return literal(text, start, "null");
    default:
      if (character === "-" || (character !== undefined && character >= "0" && character <= "9")) {
        return number(text, start);
      }
      throw new SyntaxStop(start);
  }
}

function object(text: string, start: number, depth: number): number {
  let index = skipWhitespace(text, start + 1);
  if (text[index] === "}") return index + 1;
  for (;;) {
    if (text[index] !== '"') throw new SyntaxStop(index);
    index = skipWhitespace(text, string(text, index));
    if (text[index] !== ":") throw new SyntaxStop(index);
    index = skipWhitespace(text, value(text, skipWhitespace(text, index + 1), depth + 1));
    if (text[index] === "}") return index + 1;
    if (text[index] !== ",") throw new SyntaxStop(index);
    index = skipWhitespace(text, index + 1);
  }
}

function array(text: string, start: number, depth: number): number {
  let index = skipWhitespace(text, start + 1);
  if (text[index] === "]") return index + 1;
  for (;;) {
    index = skipWhitespace(text, value(text, index, depth + 1));
    if (text[index] === "]") return index + 1;
    if (text[index] !== ",") throw new SyntaxStop(index);
    index = skipWhitespace(text, index + 1);
  }
}

function string(text: string, start: number): number {
  let index = start + 1;
  while (index < text.length) {
    const code = text.charCodeAt(index);
    if (code === 34) return index + 1;
    if (code < 32) throw new SyntaxStop(index);
    if (code === 92) {
      const escaped = text[index + 1];
      if (escaped === "u") {
        if (!/^[0-9a-fA-F]{4}$/.test(text.slice(index + 2, index + 6))) throw new SyntaxStop(index);
        index += 6;
        continue;
      }
      if (escaped === undefined || !'"\\/bfnrt'.includes(escaped)) throw new SyntaxStop(index);
      index += 2;
      continue;
    }
    index++;
  }
  throw new SyntaxStop(text.length);
}

function literal(text: string, start: number, word: string): number {
  for (let offset = 0; offset < word.length; offset++) {
    if (text[start + offset] !== word[offset]) throw new SyntaxStop(start + offset);
  }
  return start + word.length;
}

function isDigit(text: string, index: number): boolean {
  const code = text.charCodeAt(index);
  return code >= 48 && code <= 57;
}

function digits(text: string, start: number): number {
  let index = start;
  while (isDigit(text, index)) index++;
  if (index === start) throw new SyntaxStop(start);
  return index;
}

function number(text: string, start: number): number {
  let index = text[start] === "-" ? start + 1 : start;
  // A leading zero stands alone: "01" breaks at the "1".
  index = text[index] === "0" ? index + 1 : digits(text, index);
  if (text[index] === ".") index = digits(text, index + 1);
  if (text[index] === "e" || text[index] === "E") {
    index++;
    if (text[index] === "+" || text[index] === "-") index++;
    index = digits(text, index);
  }
  return index;
}
