import { MAX_WEBHOOK_BODY_BYTES } from '../delivery/webhook-sender';
import { WebhookEvent, WebhookFormat, WebhookRenderContext } from '../webhook-event';
import { discordBody, slackBody } from './chat-bodies';
import { DISCORD_MARKUP, SLACK_MARKUP } from './chat-markup';
import { standardBody } from './standard-body';
import { summarise } from './webhook-summary';

/** decisions.md, "Webhooks (turn 5)", Safety: bodies are 256 KB at most; the sender refuses more, so a rendered body always fits. */
export const MAX_RENDERED_BODY_BYTES = MAX_WEBHOOK_BODY_BYTES;

/**
 * The request body of a delivery, JSON text, at most MAX_RENDERED_BODY_BYTES: Standard Webhooks' `{type, timestamp,
 * data}` (shortened past the cap, see standard-body.ts), or a Slack or Discord message a person reads. The signature is
 * computed over exactly this text.
 */
export function renderWebhook(format: WebhookFormat, event: WebhookEvent, context: WebhookRenderContext): string {
  switch (format) {
    case 'standard':
      return standardBody(event, MAX_RENDERED_BODY_BYTES);
    case 'slack':
      return JSON.stringify(slackBody(summarise(event, context, SLACK_MARKUP), context));
    case 'discord':
      return JSON.stringify(discordBody(summarise(event, context, DISCORD_MARKUP), context, event.createdAt));
  }
}
