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

/**
 * The key a link's use is counted under in SignInLimiter, whose budgets are per address and per email: a link has
 * no email before it is looked up, so each link is a key of its own and only the address's budget binds.
 */
export function tokenBudgetKey(tokenHash: string): string {
  return `link:${tokenHash}`;
}
