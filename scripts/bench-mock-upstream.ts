// A minimal OpenAI-compatible upstream for scripts/bench: a short streamed reply with usage.
const chunk = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
const base = { id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1, model: "bench" };
const body =
  chunk({
    ...base,
    choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }],
  }) +
  ["Hello", " from", " the", " bench", " upstream", "."]
    .map((w) => chunk({ ...base, choices: [{ index: 0, delta: { content: w }, finish_reason: null }] }))
    .join("") +
  chunk({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }) +
  chunk({ ...base, choices: [], usage: { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 } }) +
  "data: [DONE]\n\n";
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    await req.arrayBuffer();
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  },
});
console.log(`port ${server.port}`);
