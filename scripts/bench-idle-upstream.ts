// The upstream of scripts/bench's idle-close phase: the chat stream of bench-mock-upstream.ts on a
// raw HTTP/1.1 server (test/helpers/idle-close-upstream.ts) that closes each keep-alive connection
// after 10 answers, as the next request's first bytes arrive, unread: the keep-alive race of an
// upstream whose idle timer fires just as gengate reuses the connection. GET /stats: its counts.
import { chatStream, startIdleCloseUpstream } from "../test/helpers/idle-close-upstream.ts";

const body = chatStream(["Hello", " from", " the", " bench", " upstream", "."]);
const up = startIdleCloseUpstream({
  answersPerConnection: 10,
  answer: (path) =>
    path === "/stats"
      ? { contentType: "application/json", body: JSON.stringify(up) }
      : { contentType: "text/event-stream", body },
});
console.log(`port ${up.port}`);
