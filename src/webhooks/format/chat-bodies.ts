import { WebhookRenderContext } from '../webhook-event';
import { discordEscape, neutraliseMentions, oneLine, SLACK_MARKUP } from './chat-markup';
import { WebhookSummary } from './webhook-summary';

/** Slack's limits (api.slack.com, "Blocks" reference): a message's text, its blocks, a section's text and fields. */
export const SLACK_LIMITS = { text: 40_000, blocks: 50, sectionText: 3_000, fields: 10, fieldText: 2_000 } as const;

/** Discord's limits (discord.com/developers, "Message Resource", embed limits). */
export const DISCORD_LIMITS = {
  content: 2_000,
  embeds: 10,
  title: 256,
  description: 4_096,
  fields: 25,
  fieldName: 256,
  fieldValue: 1_024,
  footer: 2_048,
  /** Title, description, fields' names and values, footer and author of all the message's embeds together. */
  embedTotal: 6_000,
} as const;

/** Sections for the list of flags or files: ten lines at their longest need four; the message stays far below 50 blocks. */
const SLACK_LIST_SECTIONS = 5;

export interface SlackBody {
  /** The notification's text, and what clients without blocks show. */
  text: string;
  blocks: Record<string, unknown>[];
}

export interface DiscordBody {
  content: string;
  embeds: DiscordEmbed[];
  allowed_mentions: { parse: never[] };
}

export interface DiscordEmbed {
  title: string;
  url?: string;
  description?: string;
  fields: { name: string; value: string; inline: boolean }[];
  timestamp: string;
  footer: { text: string };
}

/** `{text, blocks}`: the headline, the list of flags or files, the notes as fields, and where it happened. */
export function slackBody(summary: WebhookSummary, context: WebhookRenderContext): SlackBody {
  const m = SLACK_MARKUP;
  const headline = lastResortClamp(summary.headline, SLACK_LIMITS.sectionText);
  const blocks: Record<string, unknown>[] = [{ type: 'section', text: { type: 'mrkdwn', text: headline } }];
  for (const list of packLines(summary.lines, summary.more, SLACK_LIMITS.sectionText, SLACK_LIST_SECTIONS)) {
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: list } });
  }
  const notes = summary.notes.slice(0, SLACK_LIMITS.fields);
  if (notes.length > 0) {
    blocks.push({
      type: 'section',
      fields: notes.map((note) => ({ type: 'mrkdwn', text: lastResortClamp(`*${note.label}*\n${note.text}`, SLACK_LIMITS.fieldText) })),
    });
  }
  const where = `${m.text(context.organizationName, 100)} on Flagstore${summary.url ? ` · ${m.link(summary.url, 'Open in the console', 50)}` : ''}`;
  blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: where }] });
  return { text: headline, blocks };
}

/**
 * `{content, embeds, allowed_mentions}`: the headline as the message, one embed with the subject (linked), the list,
 * the notes as fields and the event's time. Mentions are off whatever the text holds.
 */
export function discordBody(summary: WebhookSummary, context: WebhookRenderContext, at: Date): DiscordBody {
  const fields = summary.notes.slice(0, DISCORD_LIMITS.fields).map((note) => ({
    name: lastResortClamp(note.label, DISCORD_LIMITS.fieldName),
    value: lastResortClamp(note.text, DISCORD_LIMITS.fieldValue),
    inline: note.text.length <= 40,
  }));
  // Escaping at most doubles the text: 120 characters of a title stay within the 256 of an embed's title.
  const title = lastResortClamp(discordEscape(oneLine(summary.title, 120)), DISCORD_LIMITS.title);
  // A footer shows no markdown, so only mentions are broken (allowed_mentions would keep them silent anyway).
  const footer = { text: `${neutraliseMentions(oneLine(context.organizationName, 100))} · Flagstore` };
  const used = title.length + footer.text.length + fields.reduce((sum, field) => sum + field.name.length + field.value.length, 0);
  const [description] = packLines(summary.lines, summary.more, Math.min(DISCORD_LIMITS.description, DISCORD_LIMITS.embedTotal - used), 1);
  const embed: DiscordEmbed = {
    title,
    ...(summary.url ? { url: summary.url } : {}),
    ...(description ? { description } : {}),
    fields,
    timestamp: at.toISOString(),
    footer,
  };
  return { content: lastResortClamp(summary.headline, DISCORD_LIMITS.content), embeds: [embed], allowed_mentions: { parse: [] } };
}

/**
 * The lines, whole, in at most `pieces` texts of at most `budget` characters each (Slack's list spans several sections,
 * Discord's is one description), and "and N more" after them for the rest: those the summary did not list and those
 * that did not fit. Nothing when there is nothing to list.
 */
export function packLines(lines: readonly string[], more: number, budget: number, pieces: number): string[] {
  if (budget <= 0 || pieces <= 0) return [];
  const packed: string[][] = [];
  let size = 0;
  for (const line of lines) {
    const current = packed[packed.length - 1];
    if (current && size + 1 + line.length <= budget) {
      current.push(line);
      size += 1 + line.length;
    } else if (packed.length < pieces && line.length <= budget) {
      packed.push([line]);
      size = line.length;
    } else break;
  }
  let rest = more + lines.length - packed.reduce((sum, piece) => sum + piece.length, 0);
  while (rest > 0) {
    const last = packed[packed.length - 1];
    const tail = andMore(rest);
    if (last && size + 1 + tail.length <= budget) {
      last.push(tail);
      break;
    }
    if (packed.length < pieces && tail.length <= budget) {
      packed.push([tail]);
      break;
    }
    if (!last) return [lastResortClamp(tail, budget)];
    // No room for the tail: the last listed line gives its place to it.
    last.pop();
    rest += 1;
    if (last.length === 0) packed.pop();
    if (packed.length === 0) return [lastResortClamp(andMore(rest), budget)];
    size = packed[packed.length - 1].join('\n').length;
  }
  return packed.map((piece) => lastResortClamp(piece.join('\n'), budget));
}

function andMore(n: number): string {
  return `and ${n.toLocaleString('en-US')} more`;
}

/**
 * The summary's pieces are clipped where they are written, so that this never cuts: it is the guarantee that a body
 * stays within the platform's limit (a platform refuses the whole message otherwise), not the way to get there.
 */
function lastResortClamp(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, max - 1) + '…';
}
