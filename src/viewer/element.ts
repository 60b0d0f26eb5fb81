/** What `element` takes as children: nodes, text (always a text node, never parsed as HTML), or nothing. */
export type Child = Node | string | number | null | undefined | false | readonly Child[];

type Attribute = string | number | boolean | null | undefined | ((event: Event) => void);

/**
 * Makes an element with attributes (`on...` ones are event listeners, `true` sets an empty attribute, `false` and
 * null leave it out) and children. Text is always added as text nodes: nothing the page shows is parsed as HTML,
 * so a run's data (a model's report, a tool's arguments) can never become markup or script.
 */
export function element<Tag extends keyof HTMLElementTagNameMap>(
  tag: Tag,
  attributes: Readonly<Record<string, Attribute>> = {},
  ...children: Child[]
): HTMLElementTagNameMap[Tag] {
  const made = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (typeof value === "function") made.addEventListener(name.slice(2), value);
    else if (value === true) made.setAttribute(name, "");
    else if (value !== false && value !== null && value !== undefined) made.setAttribute(name, String(value));
  }
  append(made, children);
  return made;
}

/** Appends children as `element` does. */
export function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else if (child instanceof Node) parent.appendChild(child);
    else parent.appendChild(document.createTextNode(String(child)));
  }
}

/** Replaces everything in `parent` with `children`. */
export function replaceChildren(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}
