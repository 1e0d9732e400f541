import { DomainError } from '../common/domain-error';
import { EmailToken } from './email-tokens.repository';
import { MailLinksErrors } from './mail-links.errors';

/** Why a mailed link's row cannot be used at `now` (404 unknown, 410 used or expired), or null when it can. */
export function redeemableToken(token: EmailToken | null, now: number): DomainError | null {
  if (!token) return MailLinksErrors.linkNotFound();
  if (token.usedAt) return MailLinksErrors.linkUsed('used');
  if (token.expiresAt.getTime() <= now) return MailLinksErrors.linkUsed('expired');
  return null;
}
