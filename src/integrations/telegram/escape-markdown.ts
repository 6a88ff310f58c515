/**
 * Escapes text for Telegram's legacy `Markdown` parse mode, where `_`, `*`, `` ` `` and `[`
 * open entities: an agent's reply such as `snake_case` or `2*3` would otherwise make
 * Telegram refuse the whole message ("can't parse entities").
 */
export function escapeMarkdown(text: string): string {
  return text.replace(/[_*`[]/g, '\\$&');
}
