import { connect, createServer, type Socket } from "node:net";

/**
 * A TCP proxy on 127.0.0.1 in front of a server (PostgreSQL in test/db/), to play network faults
 * the server itself cannot: `cut()` drops every open connection (as a broken network does),
 * `down()` refuses new ones until `up()`, `stall()` drops every byte until `up()` without closing
 * anything (the peers hear nothing from each other; a close still passes, as a FIN would once the
 * network heals). `url(url)` rewrites a database URL to go through it.
 */
export interface TcpProxy {
  port: number;
  url(target: string): string;
  cut(): void;
  stall(): void;
  down(): void;
  up(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let refusing = false;
  let stalled = false;
  const server = createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const upstream = connect(targetPort, targetHost);
    open.add(client);
    open.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
    // Forwarded by hand (not pipe) so that stall() can drop the bytes while closes still pass.
    client.on("data", (chunk) => stalled || upstream.write(chunk));
    upstream.on("data", (chunk) => stalled || client.write(chunk));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  const cut = () => {
    for (const s of [...open]) s.destroy();
    open.clear();
  };
  return {
    port,
    url(target: string) {
      const u = new URL(target);
      u.hostname = "127.0.0.1";
      u.port = String(port);
      return u.toString();
    },
    cut,
    stall() {
      stalled = true;
    },
    down() {
      refusing = true;
      cut();
    },
    up() {
      refusing = false;
      stalled = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        cut();
        server.close(() => resolve());
      }),
  };
}
