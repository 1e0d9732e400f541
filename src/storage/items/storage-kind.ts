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

// type "/" subtype, optional parameters; RFC 9110 token characters.
const MEDIA_TYPE = /^[!#$%&'*+.^_`|~0-9a-z-]+\/[!#$%&'*+.^_`|~0-9a-z-]+(\s*;\s*[!#$%&'*+.^_`|~0-9a-z-]+=("[^"]*"|[!#$%&'*+.^_`|~0-9a-z-]+))*$/i;

/**
 * The comparable form of a Content-Type: lower-case type and parameter names, no spaces around `;` or `=`.
 * Returns null for something that is not a media type.
 */
export function normalizeContentType(value: string | undefined): string | null {
  if (value === undefined) return null;
  const trimmed = value.trim();
  if (trimmed.length === 0 || trimmed.length > 255 || !MEDIA_TYPE.test(trimmed)) return null;
  const [type, ...parameters] = trimmed.split(';').map((part) => part.trim());
  const normalizedParameters = parameters.map((parameter) => {
    const index = parameter.indexOf('=');
    return `${parameter.slice(0, index).trim().toLowerCase()}=${parameter.slice(index + 1).trim()}`;
  });
  return [type.toLowerCase(), ...normalizedParameters].join(';');
}
