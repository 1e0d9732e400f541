import { useEffect, useState } from 'react';

/**
 * Copies `text` to the clipboard, saying so. Where the page is not a secure context (plain http on another host than
 * localhost) the Clipboard API is absent: the text shown beside the button (the notice's <code>) is selected and
 * copied the older way, or left selected for Ctrl+C.
 */
export function CopyButton({ text, label, detail }: { text: string; label: string; detail: string }) {
  const [said, setSaid] = useState<string | null>(null);
  useEffect(() => setSaid(null), [text]);
  const copy = async (button: HTMLButtonElement) => {
    try {
      await navigator.clipboard.writeText(text);
      setSaid('Copied.');
      return;
    } catch {
      // No Clipboard API here (or no permission): select the text instead.
    }
    const shown = button.closest('.notice')?.querySelector('code');
    const selection = window.getSelection();
    if (!shown || !selection) return setSaid('Copy the text above by hand.');
    const range = document.createRange();
    range.selectNodeContents(shown);
    selection.removeAllRanges();
    selection.addRange(range);
    setSaid(document.execCommand('copy') ? 'Copied.' : 'Selected: press Ctrl+C (⌘C on a Mac) to copy.');
  };
  return (
    <p className="copy">
      <button type="button" onClick={(event) => void copy(event.currentTarget)}>
        {label}
        <span className="visually-hidden"> {detail}</span>
      </button>{' '}
      <span role="status">{said}</span>
    </p>
  );
}
