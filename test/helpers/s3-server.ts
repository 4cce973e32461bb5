/**
 * An S3-compatible server for tests (s3rver, a devDependency), run as its own process by
 * test/helpers/s3.ts so its memory and CPU are not the tested process's: `bun s3-server.ts DIR
 * BUCKET` prints {"port": N} once listening on 127.0.0.1 and exits when its stdin closes (the test
 * process went away).
 */
import S3rver from "s3rver";

const [directory, bucket] = process.argv.slice(2);
if (!directory || !bucket) throw new Error("usage: s3-server.ts DIR BUCKET");
const server = new S3rver({
  address: "127.0.0.1",
  port: 0,
  silent: true,
  directory,
  configureBuckets: [{ name: bucket }],
});
const { port } = await server.run();
process.stdout.write(`${JSON.stringify({ port })}\n`);
for await (const _ of process.stdin) {
  // Nothing is sent; the loop ends when the parent closes the pipe or dies.
}
await server.close();
process.exit(0);
