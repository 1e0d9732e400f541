import { HttpStatus } from '@nestjs/common';
import { DomainError } from '../common/domain-error';

/** The errors of what the service mails people: invitations by mail, password reset, email verification. */
export enum MailLinksErrorCode {
  MAIL_OFF = 'MAIL_OFF',
  LINK_NOT_FOUND = 'LINK_NOT_FOUND',
  LINK_USED = 'LINK_USED',
  EMAIL_ALREADY_VERIFIED = 'EMAIL_ALREADY_VERIFIED',
  LINK_NOT_YOURS = 'LINK_NOT_YOURS',
}

export const MailLinksErrors = {
  /** Every route that only mails answers this when SMTP_URL is not set. */
  mailOff: (what: string) =>
    new DomainError(HttpStatus.NOT_FOUND, MailLinksErrorCode.MAIL_OFF, `Mail is off on this service (SMTP_URL is not set): ${what}`),
  linkNotFound: () => new DomainError(HttpStatus.NOT_FOUND, MailLinksErrorCode.LINK_NOT_FOUND, 'This link is not valid: ask for a new one'),
  linkUsed: (why: 'used' | 'expired') =>
    new DomainError(
      HttpStatus.GONE,
      MailLinksErrorCode.LINK_USED,
      why === 'expired' ? 'This link has expired: ask for a new one' : 'This link was used already: ask for a new one',
    ),
  linkNotYours: () =>
    new DomainError(
      HttpStatus.FORBIDDEN,
      MailLinksErrorCode.LINK_NOT_YOURS,
      'This link verifies another account: sign in as the account it was mailed to, then open it again',
    ),
  emailAlreadyVerified: () => new DomainError(HttpStatus.CONFLICT, MailLinksErrorCode.EMAIL_ALREADY_VERIFIED, 'Your email is verified already'),
};
