/** A mail the service sends: to one address, plain text, optionally with an HTML alternative. From is MAIL_FROM. */
export interface MailMessage {
  /** One address, already in its normal form (src/people's email rules). */
  to: string;
  subject: string;
  text: string;
  html?: string;
}

/** What a mail row's payload keeps once it is delivered or given up: the body may hold a single-use link. */
export interface SettledMail {
  to: string;
  subject: string;
}

const ADDRESS = /^[^\s<>@,;"]+@[^\s<>@,;"]+$/;
const SUBJECT_MAX = 300;
const BODY_MAX = 256 * 1024;

/**
 * Why `message` cannot be sent, or undefined. The mailer's callers build their messages themselves: a refusal here is
 * a bug in the caller (said before anything is written), never a person's input to answer with a 400.
 */
export function mailMessageProblem(message: MailMessage): string | undefined {
  if (typeof message.to !== 'string' || message.to.length > 254 || !ADDRESS.test(message.to)) return 'to must be one email address';
  if (
    typeof message.subject !== 'string' ||
    message.subject.trim() === '' ||
    message.subject.length > SUBJECT_MAX ||
    /[\r\n]/.test(message.subject)
  ) {
    return `subject must be 1-${SUBJECT_MAX} characters on one line`;
  }
  if (typeof message.text !== 'string' || message.text === '' || message.text.length > BODY_MAX) return `text must be 1-${BODY_MAX} characters`;
  if (message.html !== undefined && (typeof message.html !== 'string' || message.html.length > BODY_MAX))
    return `html must be at most ${BODY_MAX} characters`;
  return undefined;
}
