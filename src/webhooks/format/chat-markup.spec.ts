import { packLines } from './chat-bodies';
import { clip, DISCORD_MARKUP, discordEscape, oneLine, SLACK_MARKUP, slackEscape } from './chat-markup';

describe('chat markup', () => {
  it('Slack: escapes &, < and > only, so <!channel> and <url|label> become text', () => {
    expect(slackEscape('a & b <!channel> <https://x|y>')).toBe('a &amp; b &lt;!channel&gt; &lt;https://x|y&gt;');
    expect(SLACK_MARKUP.text('@channel and @here', 100)).toBe('@\u200bchannel and @\u200bhere');
  });

  it('Discord: escapes every character that formats, links or mentions, and breaks @everyone and @here', () => {
    expect(discordEscape('*a* _b_ ~c~ `d` ||e|| > f # g [h](i) <@123> \\')).toBe(
      '\\*a\\* \\_b\\_ \\~c\\~ \\`d\\` \\|\\|e\\|\\| \\> f \\# g \\[h\\]\\(i\\) \\<@123\\> \\\\',
    );
    expect(discordEscape('@everyone @Here')).toBe('@\u200beveryone @\u200bHere');
  });

  it('keeps user text on one line without control characters, clipped on whole characters', () => {
    expect(oneLine('a\nb\r\n\tc\u0000d\u2028e', 100)).toBe('a b c d e');
    expect(clip('abcdef', 4)).toBe('abc…');
    expect(clip('🎮🎮🎮', 4)).toBe('🎮…');
    expect(clip('abc', 3)).toBe('abc');
  });

  it('code spans cannot be closed early by a backtick in the value', () => {
    expect(SLACK_MARKUP.code('a`b<c>', 20)).toBe('`aˋb&lt;c&gt;`');
    expect(DISCORD_MARKUP.code('a`b @everyone', 20)).toBe('`aˋb @\u200beveryone`');
  });

  it('links: the label escaped, a URL unable to end the link early', () => {
    expect(SLACK_MARKUP.link('https://x.example/a?b=1&c=2', 'a|<b>', 50)).toBe('<https://x.example/a?b=1&amp;c=2|a|&lt;b&gt;>');
    expect(DISCORD_MARKUP.link('https://x.example/a (b)', '[x]', 50)).toBe('[\\[x\\]](https://x.example/a%20%28b%29)');
  });
});

describe('packLines', () => {
  const lines = ['• one', '• two', '• three'];

  it('keeps every line when they fit, with "and N more" for those the summary did not list', () => {
    expect(packLines(lines, 0, 100, 1)).toEqual(['• one\n• two\n• three']);
    expect(packLines(lines, 1234, 100, 1)).toEqual(['• one\n• two\n• three\nand 1,234 more']);
    expect(packLines([], 0, 100, 1)).toEqual([]);
  });

  it('drops the lines that do not fit and counts them, keeping room for the count', () => {
    // 11 characters: "• one\n• two" fits, but then "and 1 more" does not, so "• two" gives way.
    expect(packLines(lines, 0, 16, 1)).toEqual(['• one\nand 2 more']);
    for (const budget of [10, 16, 20, 30]) {
      for (const piece of packLines(lines, 5, budget, 1)) expect(piece.length).toBeLessThanOrEqual(budget);
    }
  });

  it('spreads the lines over several pieces, in order, before it drops any', () => {
    expect(packLines(lines, 0, 12, 3)).toEqual(['• one\n• two', '• three']);
    // No room for the count after "• three": it gives its piece to "and 3 more".
    expect(packLines(lines, 2, 12, 2)).toEqual(['• one\n• two', 'and 3 more']);
  });
});
