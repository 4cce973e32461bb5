import type { Socket } from "bun";

/**
 * An HTTP/1.1 upstream on a raw TCP socket (Bun.listen) that plays the keep-alive race: each
 * connection answers `answersPerConnection` requests with `connection: keep-alive`, then, like a
 * server whose idle timer fires just as the client reuses the connection, closes the socket when the
 * next request's first bytes arrive, without reading or answering it. A request sent with
 * `connection: close` is answered and its connection closed, as HTTP/1.1 says.
 * `closeAfterMs` instead reads the request, waits, then closes without answering (an upstream that
 * worked on the request and died). `processed` counts the requests answered (the work done upstream),
 * `arrivals` every request that reached a socket, `connections` the sockets opened.
 * Used by test/providers/upstream-client*.test.ts and by the bench's idle-close phase
 * (scripts/bench-idle-upstream.ts).
 */
export interface IdleCloseUpstream {
  url: string;
  port: number;
  processed: number;
  arrivals: number;
  connections: number;
  /** Requests whose connection was closed as they arrived, unread (the race). */
  closedUnread: number;
  stop(): void;
}

export interface UpstreamAnswer {
  status?: number;
  contentType: string;
  body: string | Uint8Array;
}

interface Conn {
  buf: Buffer;
  served: number;
}

export function startIdleCloseUpstream(opts: {
  answer: (path: string, body: string) => UpstreamAnswer;
  answersPerConnection?: number;
  closeAfterMs?: number;
}): IdleCloseUpstream {
  const perConnection = opts.answersPerConnection ?? 1;
  const state: IdleCloseUpstream = {
    url: "",
    port: 0,
    processed: 0,
    arrivals: 0,
    connections: 0,
    closedUnread: 0,
    stop: () => server.stop(true),
  };
  const serve = (sock: Socket<Conn>) => {
    const c = sock.data;
    for (;;) {
      const end = c.buf.indexOf("\r\n\r\n");
      if (end === -1) return;
      const head = c.buf.subarray(0, end).toString("latin1");
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
      if (c.buf.length < end + 4 + length) return;
      const body = c.buf.subarray(end + 4, end + 4 + length).toString("utf8");
      c.buf = c.buf.subarray(end + 4 + length);
      state.arrivals++;
      if (opts.closeAfterMs !== undefined) {
        setTimeout(() => sock.end(), opts.closeAfterMs);
        return;
      }
      const path = head.split(" ")[1] ?? "/";
      const close = /\r\nconnection:\s*close/i.test(head);
      const a = opts.answer(path, body);
      const bytes = typeof a.body === "string" ? Buffer.from(a.body) : Buffer.from(a.body);
      state.processed++;
      c.served++;
      sock.write(
        `HTTP/1.1 ${a.status ?? 200} OK\r\ncontent-type: ${a.contentType}\r\ncontent-length: ${bytes.length}\r\nconnection: ${close ? "close" : "keep-alive"}\r\n\r\n`,
      );
      sock.write(bytes);
      if (close) {
        sock.end();
        return;
      }
    }
  };
  const server = Bun.listen<Conn>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(sock) {
        state.connections++;
        sock.data = { buf: Buffer.alloc(0), served: 0 };
      },
      data(sock, chunk) {
        const c = sock.data;
        if (c.buf.length === 0 && c.served >= perConnection) {
          // The idle close racing the reuse: the request's first bytes are here, unread.
          state.arrivals++;
          state.closedUnread++;
          sock.end();
          return;
        }
        c.buf = Buffer.concat([c.buf, chunk]);
        serve(sock);
      },
    },
  });
  state.port = server.port;
  state.url = `http://127.0.0.1:${server.port}`;
  return state;
}

/** An OpenAI chat stream (SSE) with usage: what the chat adapter reads. */
export function chatStream(words: string[]): string {
  const base = { id: "chatcmpl-idle", object: "chat.completion.chunk", created: 1, model: "idle" };
  const chunk = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
  return (
    words
      .map((w) => chunk({ ...base, choices: [{ index: 0, delta: { content: w }, finish_reason: null }] }))
      .join("") +
    chunk({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }) +
    chunk({
      ...base,
      choices: [],
      usage: { prompt_tokens: 5, completion_tokens: words.length, total_tokens: 5 + words.length },
    }) +
    "data: [DONE]\n\n"
  );
}
