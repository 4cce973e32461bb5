import { describe, expect, test } from "bun:test";
import { httpStatus } from "../../src/http/errors.ts";
import { DomainError } from "../../src/lib/errors.ts";
import { checkWebhookUrl, type WebhookPolicy } from "../../src/webhooks/url-policy.ts";
import { fakeResolver, NOTHING_ALLOWED } from "./helpers.ts";

const dns = fakeResolver({
  "hooks.example.com": ["93.184.216.34"],
  "v6.example.com": ["2606:4700:4700::1111"],
  "dual.example.com": ["93.184.216.34", "2606:4700:4700::1111"],
  localhost: ["127.0.0.1", "::1"],
  "mixed.example.com": ["93.184.216.34", "10.0.0.5"],
  "mixed6.example.com": ["2606:4700:4700::1111", "fd00::5"],
  "metadata.example.com": ["169.254.169.254"],
  "mapped.example.com": ["::ffff:127.0.0.1"],
  "127.0.0.1.nip.io": ["127.0.0.1"],
  "nas.home.arpa": ["192.168.1.20"],
  "garbage.example.com": ["not-an-address"],
  "empty.example.com": [],
});

/** The DomainError a rejected promise carries (fails the test if it resolved or threw something else). */
async function refusal(p: Promise<unknown>): Promise<DomainError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    const e = err as DomainError;
    expect(e.code).toBe("bad_webhook_url");
    expect(httpStatus(e.code)).toBe(400);
    expect(e.param).toBe("webhook_url");
    return e;
  }
  throw new Error("expected bad_webhook_url, got acceptance");
}

describe("checkWebhookUrl (happy)", () => {
  test.each([
    "https://hooks.example.com/gengate",
    "http://hooks.example.com:8080/a/b?x=1#frag",
    "https://v6.example.com/",
    "https://dual.example.com/",
    "https://93.184.216.34/hook",
    "https://[2606:4700:4700::1111]/hook",
    "https://[::ffff:93.184.216.34]/hook",
  ])("%p is accepted", async (raw) => {
    const url = await checkWebhookUrl(raw, NOTHING_ALLOWED, dns);
    expect(url).toBeInstanceOf(URL);
    expect(url.href.startsWith("http")).toBe(true);
  });

  test("an allow-listed private CIDR opens exactly that block", async () => {
    const policy: WebhookPolicy = { allowPrivateCidrs: ["192.168.1.0/24"] };
    await checkWebhookUrl("http://nas.home.arpa:9000/hook", policy, dns);
    await checkWebhookUrl("http://192.168.1.50/hook", policy, dns);
    await refusal(checkWebhookUrl("http://192.168.2.1/hook", policy, dns));
    await refusal(checkWebhookUrl("http://10.0.0.1/hook", policy, dns));
    await refusal(checkWebhookUrl("http://169.254.169.254/", policy, dns));
  });

  test("an allow-listed IPv6 block and a mapped address under an IPv4 block", async () => {
    await checkWebhookUrl("http://[fd00::5]/", { allowPrivateCidrs: ["fd00::/8"] }, dns);
    await checkWebhookUrl("http://[::ffff:192.168.1.9]/", { allowPrivateCidrs: ["192.168.1.0/24"] }, dns);
  });

  test("the parsed URL is returned normalised (what gets stored)", async () => {
    const url = await checkWebhookUrl("HTTPS://Hooks.Example.COM/x", NOTHING_ALLOWED, dns);
    expect(url.href).toBe("https://hooks.example.com/x");
  });
});

describe("checkWebhookUrl (errors): syntax", () => {
  test.each([
    ["ftp://hooks.example.com/x", /http or https/],
    ["file:///etc/passwd", /http or https/],
    ["javascript:alert(1)", /http or https/],
    ["gopher://hooks.example.com/", /http or https/],
    ["ws://hooks.example.com/", /http or https/],
    ["https://user:pass@hooks.example.com/", /user name or password/],
    ["https://user@hooks.example.com/", /user name or password/],
    ["https://:pass@hooks.example.com/", /user name or password/],
    ["not a url", /spaces or control/],
    ["hooks.example.com/path", /not a valid absolute URL/],
    ["/relative/path", /not a valid absolute URL/],
    ["https://", /not a valid absolute URL/],
    ["http://[::1/", /not a valid absolute URL/],
    ["", /non-empty string/],
    ["https://hooks.example.com/\nx", /spaces or control/],
    ["https://hooks.example.com/\tx", /spaces or control/],
    [" https://hooks.example.com/", /spaces or control/],
    [`https://hooks.example.com/${"a".repeat(2048)}`, /longer than 2048/],
    [`https://hooks.example.com/${"é".repeat(1000)}`, /longer than 2048 characters once encoded/],
  ])("%p is refused (%p)", async (raw, message) => {
    const e = await refusal(checkWebhookUrl(raw, NOTHING_ALLOWED, dns));
    expect(e.message).toMatch(message);
  });

  test("a non-string is refused", async () => {
    await refusal(checkWebhookUrl(42 as unknown as string, NOTHING_ALLOWED, dns));
  });

  test("exactly 2048 characters is accepted", async () => {
    const base = "https://hooks.example.com/";
    await checkWebhookUrl(base + "a".repeat(2048 - base.length), NOTHING_ALLOWED, dns);
  });

  test("an unresolvable host is refused, and so is an empty or unparsable DNS answer", async () => {
    expect((await refusal(checkWebhookUrl("https://nx.example.com/", NOTHING_ALLOWED, dns))).message).toMatch(
      /could not be resolved/,
    );
    await refusal(checkWebhookUrl("https://empty.example.com/", NOTHING_ALLOWED, dns));
    await refusal(checkWebhookUrl("https://garbage.example.com/", NOTHING_ALLOWED, dns));
  });
});

describe("checkWebhookUrl (security): SSRF targets", () => {
  test.each([
    "http://127.0.0.1/",
    "http://127.0.0.1:8080/admin",
    "http://10.0.0.1/",
    "http://172.16.5.4/",
    "http://192.168.0.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://0.0.0.0/",
    "http://100.64.0.1/",
    "http://198.18.0.1/",
    "http://240.0.0.1/",
    "http://255.255.255.255/",
    "http://224.0.0.1/",
    "http://[::1]/",
    "http://[::]/",
    "http://[fd00::1]/",
    "http://[fe80::1]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://[ff02::1]/",
    // IPv4-mapped IPv6 in every spelling the URL parser accepts.
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://[0:0:0:0:0:ffff:7f00:1]/",
    "http://[::ffff:169.254.169.254]/",
    // Legacy IPv4 forms, normalised by the URL parser to 127.0.0.1 / 169.254.169.254.
    "http://0x7f.0.0.1/",
    "http://0177.0.0.1/",
    "http://2130706433/",
    "http://127.1/",
    "http://0xa9fea9fe/",
    "http://[::127.0.0.1]/",
    // Host names resolving to non-public addresses.
    "http://localhost:3000/",
    "http://LOCALHOST/",
    "http://127.0.0.1.nip.io/",
    "http://metadata.example.com/",
    "http://mapped.example.com/",
  ])("%p is refused", async (raw) => {
    await refusal(checkWebhookUrl(raw, NOTHING_ALLOWED, dns));
  });

  test("an IP literal's refusal names its range; a host name's does not reveal what it resolved to", async () => {
    const literal = await refusal(checkWebhookUrl("http://169.254.169.254/", NOTHING_ALLOWED, dns));
    expect(literal.message).toContain("169.254.169.254");
    expect(literal.message).toContain("link-local");
    const named = await refusal(checkWebhookUrl("http://metadata.example.com/", NOTHING_ALLOWED, dns));
    expect(named.message).toContain("non-public");
    expect(named.message).not.toContain("169.254");
  });

  test("a host with one private address among public ones is refused (IPv4 and IPv6)", async () => {
    await refusal(checkWebhookUrl("https://mixed.example.com/", NOTHING_ALLOWED, dns));
    await refusal(checkWebhookUrl("https://mixed6.example.com/", NOTHING_ALLOWED, dns));
  });

  test("a mixed host passes only when the allow-list covers its private address", async () => {
    await checkWebhookUrl("https://mixed.example.com/", { allowPrivateCidrs: ["10.0.0.0/8"] }, dns);
    await refusal(checkWebhookUrl("https://mixed.example.com/", { allowPrivateCidrs: ["10.1.0.0/16"] }, dns));
  });

  test("even 0.0.0.0/0 and ::/0 in the allow-list do not open unspecified or multicast addresses", async () => {
    const everything = { allowPrivateCidrs: ["0.0.0.0/0", "::/0"] };
    await checkWebhookUrl("http://127.0.0.1/", everything, dns);
    await checkWebhookUrl("http://[fd00::1]/", everything, dns);
    await refusal(checkWebhookUrl("http://0.0.0.0/", everything, dns));
    await refusal(checkWebhookUrl("http://[::]/", everything, dns));
    await refusal(checkWebhookUrl("http://224.0.0.1/", everything, dns));
    await refusal(checkWebhookUrl("http://255.255.255.255/", everything, dns));
  });

  test("an invalid allow-list entry matches nothing (fails closed)", async () => {
    await refusal(
      checkWebhookUrl("http://10.0.0.1/", { allowPrivateCidrs: ["10.0.0.1/8", "nonsense"] }, dns),
    );
  });

  test("IP literals are used as is: no DNS query", async () => {
    const counting = fakeResolver({});
    await checkWebhookUrl("https://93.184.216.34/", NOTHING_ALLOWED, counting);
    await refusal(checkWebhookUrl("http://127.0.0.1/", NOTHING_ALLOWED, counting));
    expect(Object.keys(counting.calls)).toEqual([]);
  });
});
