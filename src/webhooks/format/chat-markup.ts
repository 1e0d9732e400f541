/**
 * The few pieces of markup a chat message is written with, once per chat. What a person reads (webhook-summary.ts) is
 * written once against this interface; Slack's mrkdwn and Discord's markdown differ in links, emphasis and escaping.
 *
 * User-provided text (people's, keys', organizations' names, change requests' titles, comments) goes through `text`,
 * which keeps it on one line, clips it and escapes it so that it cannot format, link or mention anyone.
 */
export interface ChatMarkup {
  /** User-provided text, on one line, at most `max` characters, unable to format or mention. */
  text(raw: string, max: number): string;
  /** A literal (a flag key, a value, an id) in a code span. */
  code(raw: string, max: number): string;
  /** `label` is raw text; `url` one we built (or the change request's, which the service built). */
  link(url: string, label: string, max: number): string;
  /** `markup` is already escaped. */
  bold(markup: string): string;
}

/** Slack's mrkdwn (api.slack.com, "Formatting text for app surfaces"): only &, < and > are control characters. */
export const SLACK_MARKUP: ChatMarkup = {
  text: (raw, max) => slackEscape(neutraliseMentions(oneLine(raw, max))),
  code: (raw, max) => '`' + slackEscape(oneLine(raw, max).replace(/`/g, 'ˋ')) + '`',
  link: (url, label, max) => `<${slackEscape(safeUrl(url))}|${slackEscape(neutraliseMentions(oneLine(label, max)))}>`,
  bold: (markup) => `*${markup}*`,
};

/**
 * Discord's markdown: a backslash before any punctuation shows it as itself, so every character that could start
 * emphasis, a code span, a spoiler, a quote, a heading, a masked link or a `<@…>` mention is escaped. `@everyone` and
 * `@here` are broken with a zero-width space as well; the body also sets `allowed_mentions: {parse: []}`, so nothing
 * pings even if a mention slipped through.
 */
export const DISCORD_MARKUP: ChatMarkup = {
  text: (raw, max) => discordEscape(oneLine(raw, max)),
  code: (raw, max) => '`' + neutraliseMentions(oneLine(raw, max).replace(/`/g, 'ˋ')) + '`',
  link: (url, label, max) => `[${discordEscape(oneLine(label, max))}](${safeUrl(url)})`,
  bold: (markup) => `**${markup}**`,
};

export function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function discordEscape(text: string): string {
  return neutraliseMentions(text.replace(/[\\*_~`|<>#[\]()]/g, '\\$&'));
}

/** `@everyone`, `@here` (Discord) and `@channel` (Slack's legacy link_names) with a zero-width space after the `@`. */
export function neutraliseMentions(text: string): string {
  return text.replace(/@(everyone|here|channel)/gi, '@\u200b$1');
}

/**
 * User text on one line (a newline would let it start a quote or a heading of its own), without control characters,
 * clipped to `max` characters (whole code points) with an ellipsis.
 */
export function oneLine(raw: string, max: number): string {
  const flat = raw.replace(/[\u0000-\u001f\u007f\u2028\u2029\s]+/g, ' ').trim();
  return clip(flat, max);
}

export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const points = Array.from(text);
  let kept = '';
  for (const point of points) {
    if (kept.length + point.length > max - 1) break;
    kept += point;
  }
  return kept + '…';
}

/** Our links hold ids through encodeURIComponent already; a space or a parenthesis would still end a markdown link. */
function safeUrl(url: string): string {
  return url.replace(/[\s()<>|]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0'));
}
