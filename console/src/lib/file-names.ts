/** The file-name rule of the API (decisions.md, "File names"): 1-255 characters, no `/`, `\` or control character. */
export const FILE_NAME_MAX = 255;

/** What the gallery calls a file: its name, or else its kind and when it was uploaded ("Image of Nov 27, 2026, 10:00 AM"). */
export function fileLabel(item: { fileName?: string; kind: string; createdAt: string }, locale?: string): string {
  if (item.fileName) return item.fileName;
  const when = new Date(item.createdAt).toLocaleString(locale, { dateStyle: 'medium', timeStyle: 'short' });
  return `${item.kind.charAt(0).toUpperCase()}${item.kind.slice(1)} of ${when}`;
}

/**
 * A browser file's name as the API's fileName takes it, or undefined when nothing is left of it: control characters
 * dropped, `/` and `\` as `_`, and a name too long cut in the middle of its base, keeping its extension. Browsers give
 * base names, so this rarely changes anything.
 */
export function uploadName(name: string): string | undefined {
  const clean = [...name.replace(/[\u0000-\u001f\u007f-\u009f]/g, '').replace(/[/\\]/g, '_')];
  if (clean.length === 0) return undefined;
  if (clean.length <= FILE_NAME_MAX) return clean.join('');
  const dot = clean.lastIndexOf('.');
  const extension = dot > 0 && clean.length - dot <= 16 ? clean.slice(dot) : [];
  return [...clean.slice(0, FILE_NAME_MAX - extension.length - 1), '…', ...extension].join('');
}
