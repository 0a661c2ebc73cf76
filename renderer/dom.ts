/**
 * A few DOM helpers, so that views build elements declaratively without a
 * framework. Text always goes in as text (never as HTML).
 */

type Child = Node | string | number | null | undefined | false;
type Attributes = Record<string, string | number | boolean | EventListener | undefined | null>;

/** Creates an element: `h('button', {class: 'big', onclick: go}, 'Start')`. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') element.addEventListener(name.slice(2), value);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  append(element, ...children);
  return element;
}

/** Appends children, skipping empty ones. */
export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

/** Replaces an element's children. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, ...children);
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** Creates an SVG element. */
export function svg(tag: string, attributes: Record<string, string | number> = {}, ...children: (Node | string)[]): SVGElement {
  const element = document.createElementNS(SVG_NS, tag) as SVGElement;
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  for (const child of children) element.append(child);
  return element;
}

/** A short-lived message at the bottom of the screen (announced to screen readers). */
export function toast(message: string, kind: 'info' | 'error' = 'info'): void {
  let area = document.getElementById('toasts');
  if (!area) {
    area = h('div', { id: 'toasts', role: 'status', 'aria-live': 'polite' });
    document.body.append(area);
  }
  const note = h('div', { class: `toast toast-${kind}` }, message);
  area.append(note);
  setTimeout(() => note.remove(), kind === 'error' ? 8000 : 4000);
}

/** A date and time in the shop's locale. */
export function when(iso: string | undefined | null): string {
  if (!iso) return '—';
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** Reads a file or blob as a data URL. */
export function dataUrlOf(blob: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error ?? new Error('the file could not be read'));
    reader.readAsDataURL(blob);
  });
}

/** The long side, in pixels, above which a photo is shrunk in the browser before it is sent. */
export const UPLOAD_LONG_SIDE = 2048;

/**
 * A photo as it is worth sending: one larger than UPLOAD_LONG_SIDE (a 12-megapixel phone photo) is shrunk to
 * it and re-encoded as JPEG in the browser, so the upload takes a second, not half a minute, and the engines
 * (which work at about one megapixel) lose nothing. EXIF orientation is applied by the browser's decoder. A file
 * the browser cannot decode is sent as it is, for the appliance to refuse in words.
 */
export async function shrinkPhoto(file: Blob): Promise<Blob> {
  let bitmap: ImageBitmap;
  try {
    bitmap = await createImageBitmap(file, { imageOrientation: 'from-image' });
  } catch {
    return file;
  }
  const scale = UPLOAD_LONG_SIDE / Math.max(bitmap.width, bitmap.height);
  if (scale >= 1) {
    bitmap.close();
    return file;
  }
  const canvas = document.createElement('canvas');
  canvas.width = Math.round(bitmap.width * scale);
  canvas.height = Math.round(bitmap.height * scale);
  canvas.getContext('2d')!.drawImage(bitmap, 0, 0, canvas.width, canvas.height);
  bitmap.close();
  return new Promise((resolve) => canvas.toBlob((blob) => resolve(blob ?? file), 'image/jpeg', 0.92));
}

/**
 * A photo picker: a hidden file input out of the tab order and a real button that opens it, so that Enter and
 * Space work and focus never lands on the input.
 */
export function filePicker(buttonId: string, inputId: string, label: string): [HTMLButtonElement, HTMLInputElement] {
  const input = h('input', {
    type: 'file',
    accept: 'image/jpeg,image/png,image/webp',
    id: inputId,
    class: 'visually-hidden',
    tabindex: '-1',
    'aria-hidden': 'true',
  });
  const button = h('button', { type: 'button', class: 'button', id: buttonId }, label);
  button.onclick = () => input.click();
  return [button, input];
}
