import { PriorLines } from "../common.ts";
import { redact } from "../upstream-client.ts";

const MAX_LINES = 500;
const MAX_LINE_CHARS = 2000;

/**
 * Replicate's `logs` is one string that grows while the prediction runs. This forwards only the
 * new complete lines of each answer (a partial last line waits for its newline, or for the end),
 * redacted, and stops after MAX_LINES so a chatty model cannot flood the job's log.
 */
export class LogForwarder {
  private seen = 0;
  private lines = 0;

  constructor(
    private readonly emit: (line: string) => void,
    private readonly secret: string | null,
    /** A resumed job's earlier lines: Replicate answers the whole log again, each is skipped once. */
    private readonly prior: PriorLines = PriorLines.none,
  ) {}

  push(logs: unknown, final: boolean): void {
    if (typeof logs !== "string") return;
    if (logs.length < this.seen) this.seen = 0; // rewritten upstream: start over
    let fresh = logs.slice(this.seen);
    if (!final) {
      const cut = Math.max(fresh.lastIndexOf("\n"), fresh.lastIndexOf("\r"));
      if (cut < 0) return;
      fresh = fresh.slice(0, cut + 1);
    }
    this.seen += fresh.length;
    for (const raw of fresh.split(/\r\n|\n|\r/)) {
      const line = raw.trimEnd();
      if (!line) continue;
      const shown = redact(line, this.secret).slice(0, MAX_LINE_CHARS);
      if (this.prior.take(shown)) continue;
      if (this.lines === MAX_LINES) {
        this.lines++;
        this.emit("(further upstream logs omitted)");
      }
      if (this.lines > MAX_LINES) return;
      this.lines++;
      this.emit(shown);
    }
  }
}
