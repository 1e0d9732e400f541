export enum StorageKind {
  IMAGE = 'image',
  VIDEO = 'video',
  AUDIO = 'audio',
  DOCUMENT = 'document',
}

export const STORAGE_KINDS = Object.values(StorageKind);

/** `image/*` image, `video/*` video, `audio/*` audio, anything else (text, applications, fonts...) document. */
export function kindOfContentType(contentType: string): StorageKind {
  const type = contentType.split('/', 1)[0].trim().toLowerCase();
  switch (type) {
    case 'image':
      return StorageKind.IMAGE;
    case 'video':
      return StorageKind.VIDEO;
    case 'audio':
      return StorageKind.AUDIO;
    default:
      return StorageKind.DOCUMENT;
  }
}

// RFC 9110 token characters.
const TOKEN = "[!#$%&'*+.^_`|~0-9a-z-]+";
/**
 * A quoted parameter value: visible ASCII (0x21-0x7E) only, without the quote and the backslash (no
 * quoted-pairs). Control characters, spaces, DEL and anything beyond ASCII are refused: RFC 9110 would admit
 * tabs, spaces and obs-text there, but a content type is echoed into signed URLs, the database and the CDN's
 * Content-Type header, and none of them needs more than this.
 */
const QUOTED = '"[\\x21\\x23-\\x5b\\x5d-\\x7e]*"';
// Optional whitespace around ";" and nothing else (RFC 9110 OWS: space and tab).
const PARAMETER_SOURCE = `[ \\t]*;[ \\t]*(${TOKEN})=(${QUOTED}|${TOKEN})`;
// type "/" subtype, then parameters.
const MEDIA_TYPE = new RegExp(`^(${TOKEN}/${TOKEN})((?:${PARAMETER_SOURCE})*)$`, 'i');
const PARAMETER = new RegExp(PARAMETER_SOURCE, 'gi');

/**
 * The comparable form of a Content-Type: lower-case type and parameter names, no spaces around `;` or `=`.
 * Returns null for something that is not a media type. Parameters are read as tokens, so a `;` inside a
 * quoted value stays part of that value.
 */
export function normalizeContentType(value: string | undefined): string | null {
  if (value === undefined) return null;
  const trimmed = value.trim();
  if (trimmed.length === 0 || trimmed.length > 255) return null;
  const match = MEDIA_TYPE.exec(trimmed);
  if (!match) return null;
  const parameters = [...match[2].matchAll(PARAMETER)].map(([, name, parameterValue]) => `${name.toLowerCase()}=${parameterValue}`);
  return [match[1].toLowerCase(), ...parameters].join(';');
}
