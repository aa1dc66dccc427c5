/** DOM helpers. Every piece of entry text goes into the DOM through textContent, never innerHTML. */

/** An element with a class and text (text always via textContent). */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: unknown): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (cls) el.className = cls;
  if (text !== undefined && text !== null) el.textContent = String(text);
  return el;
}

/** A `<button type="button">` with a class, text and an optional click handler. */
export function button(cls: string, text: string, onClick?: () => void): HTMLButtonElement {
  const b = h("button", cls, text);
  b.type = "button";
  if (onClick) b.addEventListener("click", onClick);
  return b;
}
