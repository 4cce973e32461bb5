// A separate process that reserves against one account until told to stop (concurrency test).
// It stops only after a refusal seen once the stop file exists, so when every worker has exited,
// all money credited before the stop file was created must be held.
import { existsSync } from "node:fs";
import { DomainError } from "../../src/lib/errors.ts";
import { makeLedger } from "./ledger-helpers.ts";

const [path, accountId, amount, stopFile] = process.argv.slice(2) as [string, string, string, string];
const { ledger } = makeLedger({ path });
let ok = 0;
let refused = 0;
for (;;) {
  const stopping = existsSync(stopFile);
  try {
    await ledger.reserve({
      accountId,
      keyId: null,
      modelId: "m",
      requestId: null,
      source: "API",
      quotedUsdMicro: BigInt(amount),
    });
    ok++;
  } catch (e) {
    if (!(e instanceof DomainError && e.code === "insufficient_balance")) throw e;
    refused++;
    if (stopping) break;
    Bun.sleepSync(1);
  }
}
process.stdout.write(JSON.stringify({ ok, refused }));
