const quote = 0x22;
const backslash = 0x5c;
const comma = 0x2c;
const openBrace = 0x7b;
const closeBrace = 0x7d;
const openBracket = 0x5b;
const closeBracket = 0x5d;

/**
 * The index just past the JSON value that starts at `start`, or -1. Only finds boundaries: the text must
 * already be known to be valid JSON (the caller parsed it), so brackets and strings are all it tracks.
 */
export function findJsonValueEnd(text: string, start: number): number {
  const first = text.charCodeAt(start);
  if (first === quote) return findStringEnd(text, start);
  if (first !== openBrace && first !== openBracket) {
    let index = start;
    while (index < text.length) {
      const code = text.charCodeAt(index);
      if (code === comma || code === closeBrace || code === closeBracket) break;
      index++;
    }
    return index === start ? -1 : index;
  }
  let depth = 0;
  for (let index = start; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === quote) {
      const end = findStringEnd(text, index);
      if (end === -1) return -1;
      index = end - 1;
    } else if (code === openBrace || code === openBracket) {
      depth++;
    } else if (code === closeBrace || code === closeBracket) {
      depth--;
      if (depth === 0) return index + 1;
    }
  }
  return -1;
}

/** The index just past the string whose opening quote is at `start`, or -1. */
function findStringEnd(text: string, start: number): number {
  let from = start + 1;
  for (;;) {
    // indexOf is native: long strings (tool output) are skipped at memchr speed.
    const closing = text.indexOf('"', from);
    if (closing === -1) return -1;
    let backslashes = 0;
    for (let index = closing - 1; index > start && text.charCodeAt(index) === backslash; index--)
      backslashes++;
    if (backslashes % 2 === 0) return closing + 1;
    from = closing + 1;
  }
}
