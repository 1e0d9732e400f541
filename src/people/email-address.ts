import { domainToASCII } from 'node:url';
import { Transform } from 'class-transformer';
import { isEmail, ValidateBy, ValidationArguments } from 'class-validator';

/**
 * An email's one spelling (decisions.md, "One email, one spelling"): trimmed, Unicode NFC; the domain through IDNA
 * to ASCII (`url.domainToASCII`), then lowercased; in the local part only the ASCII letters A-Z lowercased (a local
 * part is the mail server's to interpret, and `toLowerCase` would turn `İ` into `i̇`, PostgreSQL's `lower()` into
 * `i`). Stored and compared exactly: users, invitations, the sign-in budget and single sign-on all see this form.
 * Null when there is no `@`, nothing before or after it, or a domain IDNA cannot convert.
 */
export function normalEmail(raw: string): string | null {
  const email = raw.trim().normalize('NFC');
  const at = email.lastIndexOf('@');
  if (at <= 0 || at === email.length - 1) return null;
  const domain = domainToASCII(email.slice(at + 1));
  if (domain === '') return null;
  return `${email.slice(0, at).replace(/[A-Z]+/g, (letters) => letters.toLowerCase())}@${domain.toLowerCase()}`;
}

/**
 * What every email field of the API says about its spelling. Their OpenAPI format is `idn-email` (RFC 6531): the part
 * before the @ may hold any Unicode letter (`alİce@a.example`), which `email` does not allow.
 */
export const EMAIL_SPELLING =
  'Stored and compared in one spelling: trimmed, Unicode NFC, the domain in ASCII (IDNA) and lowercase, and before the @ only A-Z lowercased';

/** normalEmail, or an error naming `field` (a provider's email, the CLI, code that has no DTO in front of it). */
export function normaliseEmail(raw: string, field = 'email'): string {
  const email = normalEmail(raw);
  if (email === null) throw new EmailAddressError(`${field} ${unconvertible(raw)}`);
  return email;
}

export class EmailAddressError extends Error {}

/**
 * A DTO's email field: normalised as it is read (normalEmail), then checked; the message names `field` (its path,
 * e.g. `admin.email`) and says when the domain could not be converted to ASCII.
 */
export function NormalEmail(field: string): PropertyDecorator {
  const transform = Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? (normalEmail(value) ?? value) : value));
  const validate = ValidateBy({
    name: 'isNormalEmail',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && normalEmail(value) === value && isEmail(value),
      defaultMessage: (args?: ValidationArguments) =>
        typeof args?.value === 'string' ? `${field} ${unconvertible(args.value)}` : `${field} must be an email address`,
    },
  });
  return (target, property) => {
    transform(target, property);
    validate(target, property);
  };
}

function unconvertible(raw: string): string {
  const email = raw.trim();
  const at = email.lastIndexOf('@');
  if (at > 0 && at < email.length - 1 && normalEmail(email) === null)
    return 'must be an email address: its domain cannot be converted to ASCII (IDNA)';
  return 'must be an email address';
}
