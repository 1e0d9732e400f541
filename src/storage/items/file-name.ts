import { unstorableText } from '../../http/raw-input.pipe';

export const FILE_NAME_MAX_LENGTH = 255;

/** C0 controls, DEL and C1 controls: Unicode's control characters (category Cc). */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** The rule, as the API documents it and a 400 states it. */
export const FILE_NAME_RULE = `1-${FILE_NAME_MAX_LENGTH} characters, without /, \\ or control characters`;

/**
 * Why `name` cannot be a file's name (decisions.md, "File names"), or null when it can: 1-255 characters (code
 * points, as PostgreSQL's char_length counts them), no `/`, no `\`, no control character. The name is shown and
 * offered to downloaders as it is; it names nothing on the service's own disk (objects are stored by id).
 */
export function fileNameProblem(name: string): string | null {
  const length = [...name].length;
  if (length < 1 || length > FILE_NAME_MAX_LENGTH) return `must be ${FILE_NAME_RULE} (got ${length} characters)`;
  if (name.includes('/') || name.includes('\\')) return `must be ${FILE_NAME_RULE} (it holds a ${name.includes('/') ? '/' : '\\'})`;
  const unstorable = unstorableText(name);
  if (unstorable) return `must not contain ${unstorable}`;
  const control = CONTROL.exec(name);
  if (control) return `must be ${FILE_NAME_RULE} (it holds U+${control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')})`;
  return null;
}
