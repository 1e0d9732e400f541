import type { IncomingMessage } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import { PasswordHasher } from '../auth/sessions/password-hasher';
import { SessionsRepository } from '../auth/sessions/sessions.repository';
import { SignInLimiter } from '../auth/sessions/sign-in-limiter';
import { CLOCK, Clock } from '../common/clock';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Sql } from '../database/sql';
import { Transactions } from '../database/transactions';
import { InvalidationBus } from '../invalidation/invalidation-bus';
import { Mailer } from '../mail/mailer';
import { EMAIL_TOKEN, EmailTokensRepository, hashEmailToken, newEmailToken } from './email-tokens.repository';
import { MailLinksErrors } from './mail-links.errors';
import { redeemableToken } from './mail-links';
import { UsersRepository } from './users.repository';

/** How long a password reset link works. */
export const PASSWORD_RESET_TTL_MS = 3_600_000;

/**
 * Password reset by mail (decisions.md, "Trust", Password reset and verification): a request mails a single-use link
 * to the email's account, if it has one, and always answers the same; the link sets a new password, ends every
 * session of the user (on every instance, through the bus) and verifies the email, since its holder read the mail.
 * Every request counts against the sign-in budgets of the client address and of the email, every bad link against
 * the address's (SignInLimiter), taken before the work.
 */
@Injectable()
export class PasswordResetService {
  constructor(
    private readonly sql: Sql,
    private readonly transactions: Transactions,
    private readonly users: UsersRepository,
    private readonly tokens: EmailTokensRepository,
    private readonly sessions: SessionsRepository,
    private readonly hasher: PasswordHasher,
    private readonly limiter: SignInLimiter,
    private readonly mailer: Mailer,
    private readonly bus: InvalidationBus,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Mails a reset link to the account with `email`, if there is one; says nothing either way. */
  async request(request: IncomingMessage, email: string): Promise<void> {
    if (!this.mailer.enabled) throw MailLinksErrors.mailOff('ask an admin to set a new password for you');
    // Counted whether or not the email has an account, before anything is looked up, and never given back.
    await this.limiter.take(request, email);
    const user = await this.users.findByEmail(this.sql, email);
    if (!user) return;
    const { token, tokenHash } = newEmailToken();
    const now = this.clock.now();
    await this.transactions.run(async (tx) => {
      await this.tokens.create(tx, {
        tokenHash,
        purpose: 'password-reset',
        userId: user.id,
        email: user.email,
        createdAt: now,
        expiresAt: now + PASSWORD_RESET_TTL_MS,
      });
      const url = `${this.config.urls.publicUrl}/console/password-reset/${token}`;
      await this.mailer.send(tx, {
        to: user.email,
        subject: 'Reset your Flagstore password',
        text:
          `Hello ${user.name},\r\n\r\nsomeone (we hope you) asked to reset the password of your Flagstore account ${user.email}.\r\n` +
          `Choose a new password here within the hour:\r\n\r\n${url}\r\n\r\n` +
          'The link works once. Setting a password signs you out everywhere. If you did not ask, ignore this mail: your password stays.\r\n',
      });
    });
  }

  /** Sets the password of the link's user, ends all their sessions and verifies their email; the link then stops working. */
  async reset(request: IncomingMessage, token: string, newPassword: string): Promise<void> {
    if (!this.mailer.enabled) throw MailLinksErrors.mailOff('ask an admin to set a new password for you');
    // An attempt on the address's sign-in budget, taken before the work; a good link gives it back.
    const attempt = await this.limiter.take(request);
    if (!EMAIL_TOKEN.test(token)) throw MailLinksErrors.linkNotFound();
    const tokenHash = hashEmailToken(token);
    // The link is judged before the new password is hashed: a bad one costs no hash.
    const problem = redeemableToken(await this.tokens.find(this.sql, 'password-reset', tokenHash), this.clock.now());
    if (problem) throw problem;
    const passwordHash = await this.hasher.hash(newPassword);
    const { userId, ended } = await this.transactions.run(async (tx) => {
      const locked = await this.tokens.lock(tx, 'password-reset', tokenHash);
      const lost = redeemableToken(locked, this.clock.now()); // another use won meanwhile
      if (lost) throw lost;
      await this.tokens.markUsed(tx, tokenHash);
      const user = await this.users.lock(tx, locked!.userId);
      if (!user || user.email !== locked!.email) throw MailLinksErrors.linkNotFound();
      await this.users.setPassword(tx, user.id, passwordHash);
      await this.tokens.spendAllOf(tx, user.id);
      await this.users.markEmailVerified(tx, user.id);
      return { userId: user.id, ended: await this.sessions.endAllOf(tx, user.id) };
    });
    await attempt.giveBack();
    for (const sessionId of ended) this.bus.publish('session', sessionId);
    this.bus.publish('user', userId);
  }
}
