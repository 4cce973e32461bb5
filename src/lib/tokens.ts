/**
 * Token counting without a model's tokenizer.
 * - countTokens: the sandbox model's own tokenizer (a token is a word or a punctuation mark with its
 *   leading space), so its usage numbers are real for it.
 * - estimatePromptTokens: a deliberately high estimate for any upstream model, used only to size the
 *   reservation (the charge comes from the upstream's usage): UTF-8 bytes / 2 per message plus
 *   OpenAI's per-message overhead. Real tokenizers average ~4 bytes per token in English.
 */
const TOKEN = /\s*[\p{L}\p{N}_]+|\s*[^\s\p{L}\p{N}_]/gu;

export function tokenize(text: string): string[] {
  return text.match(TOKEN) ?? [];
}

export function countTokens(text: string): number {
  return tokenize(text).length;
}

export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((p) =>
        p && typeof p === "object" && typeof (p as { text?: unknown }).text === "string"
          ? (p as { text: string }).text
          : "",
      )
      .join("\n");
  }
  return "";
}

export function estimatePromptTokens(messages: { role: string; content?: unknown; name?: string }[]): number {
  let bytes = 0;
  for (const m of messages)
    bytes +=
      Buffer.byteLength(textOf(m.content), "utf8") +
      Buffer.byteLength(m.role, "utf8") +
      (m.name?.length ?? 0);
  // 8 per message (OpenAI's own overhead is ~3) keeps even one-word prompts above real counts.
  return Math.ceil(bytes / 2) + 8 * messages.length + 3;
}

/** The sandbox's exact prompt count: its tokenizer over every message, plus 4 per message and 3. */
export function countPromptTokens(messages: { role: string; content?: unknown }[]): number {
  let n = 3;
  for (const m of messages) n += 4 + countTokens(textOf(m.content));
  return n;
}
