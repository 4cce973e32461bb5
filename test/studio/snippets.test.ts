import { afterAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildCatalog } from "../../src/catalog/catalog.ts";
import { KEY_PLACEHOLDER, studioSnippets } from "../../src/studio/snippets.ts";
import { tempDir } from "../helpers/server.ts";
import { sampleInput } from "./form-fixtures.ts";

const catalog = buildCatalog();
const dir = tempDir("gengate-snippets-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const BASE = "https://gen.example.com";

async function run(cmd: string[], env: Record<string, string> = {}) {
  const p = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe", env: { ...process.env, ...env } });
  const [out, err, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { out, err, code };
}

/** An input with everything a quoting bug would trip on. */
function trickyInput(id: string): Record<string, unknown> {
  const input = sampleInput(catalog.get(id)!);
  for (const k of ["prompt", "text"])
    if (k in input) input[k] = `it's a "fox" \\ $HOME \`x\` \n second line ${"\u00e9"}`;
  return input;
}

describe("studio snippets", () => {
  for (const model of catalog.models) {
    test(`${model.id}: JavaScript passes node --check, Python py_compile; the key is a placeholder`, async () => {
      const s = studioSnippets(model, trickyInput(model.id), BASE);
      const js = join(dir, `${model.id.replace("/", "-")}.mjs`);
      const py = join(dir, `${model.id.replace("/", "-")}.py`);
      writeFileSync(js, s.javascript);
      writeFileSync(py, s.python);
      const node = await run(["node", "--check", js]);
      expect(node.err).toBe("");
      expect(node.code).toBe(0);
      const pyc = await run(["python3", "-m", "py_compile", py]);
      expect(pyc.err).toBe("");
      expect(pyc.code).toBe(0);
      for (const text of [s.curl, s.javascript, s.python]) {
        expect(text).toContain(KEY_PLACEHOLDER);
        expect(text).toContain("gen.example.com");
        expect(text).not.toMatch(/gk_[0-9A-Za-z]{8}/);
      }
      for (const m of s.more) {
        const file = join(
          dir,
          `${model.id.replace("/", "-")}-${m.id}.${m.language === "python" ? "py" : "mjs"}`,
        );
        writeFileSync(file, m.text);
        const check =
          m.language === "python"
            ? await run(["python3", "-m", "py_compile", file])
            : await run(["node", "--check", file]);
        expect(check.err).toBe("");
        expect(check.code).toBe(0);
        expect(m.text).toContain(KEY_PLACEHOLDER);
        expect(m.text).toContain("gen.example.com");
      }
      const openAIMedia = ["image", "audio", "video"].includes(model.kind) ? ["openai-media"] : [];
      expect(s.more.map((m) => m.id)).toEqual(
        model.kind === "text" ? ["anthropic-js", "anthropic-py", "ai-sdk"] : ["replicate", ...openAIMedia],
      );
      expect(s.javascript).toContain(model.kind === "text" ? 'from "openai"' : 'from "@fal-ai/client"');
      expect(s.python).toContain(model.kind === "text" ? "from openai import OpenAI" : "import fal_client");
    });
  }

  test("media: the curl body and the Python arguments are exactly the input (shell and Python quoting)", async () => {
    for (const id of ["sandbox/image", "sandbox/video", "sandbox/speech", "sandbox/avatar"]) {
      const input = trickyInput(id);
      const s = studioSnippets(catalog.get(id)!, input, BASE);
      // curl, replaced by a function printing its arguments one per line (NUL-separated).
      const sh = await run(["sh", "-c", `curl() { printf '%s\\0' "$@"; }\n${s.curl}`]);
      expect(sh.code).toBe(0);
      const args = sh.out.split("\0");
      expect(args.slice(0, 4)).toEqual(["-sS", "-X", "POST", `${BASE}/v1/queue/${id}`]);
      expect(args).toContain(`Authorization: Key ${KEY_PLACEHOLDER}`);
      expect(JSON.parse(args[args.indexOf("-d") + 1]!)).toEqual(input);
      // fal_client, replaced by a stub module printing what it was given.
      const stub = tempDir("gengate-falstub-");
      writeFileSync(
        join(stub, "fal_client.py"),
        `import json, os\ndef subscribe(app, arguments, with_logs, on_queue_update):\n    print(json.dumps({"app": app, "arguments": arguments, "key": os.environ["FAL_KEY"], "host": os.environ["FAL_QUEUE_RUN_HOST"]}))\n    return {}\n`,
      );
      const py = join(dir, "check.py");
      writeFileSync(py, s.python);
      const out = await run(["python3", py], { PYTHONPATH: stub });
      expect(out.err).toBe("");
      const seen = JSON.parse(out.out.split("\n")[0]!);
      expect(seen).toEqual({
        app: id,
        arguments: input,
        key: KEY_PLACEHOLDER,
        host: "gen.example.com/v1/queue",
      });
      rmSync(stub, { recursive: true, force: true });
    }
  });

  test("media: Replicate's client runs the catalog id (owner/name) with exactly the input", async () => {
    const input = trickyInput("sandbox/image");
    const r = studioSnippets(catalog.get("sandbox/image")!, input, BASE).more[0]!;
    expect(r.text).toContain(`baseUrl: "${BASE}/v1"`);
    expect(r.text).toContain('replicate.run("sandbox/image"');
    const inputText = /input: (\{[\s\S]*?\n {2}\}),\n\}\);/.exec(r.text)?.[1];
    expect(JSON.parse(inputText!)).toEqual(input);
  });

  test("text: Anthropic's SDKs at the server's root (they add /v1/messages), the AI SDK at /v1", async () => {
    const more = studioSnippets(catalog.get("sandbox/chat")!, {}, `${BASE}/`).more;
    expect(more[0]!.text).toContain(`baseURL: "${BASE}",`);
    expect(more[1]!.text).toContain(`base_url="${BASE}",`);
    expect(more[2]!.text).toContain(`baseURL: "${BASE}/v1",`);
  });

  test("text: every tab makes the chat's own call (system prompt, conversation, temperature, max_tokens), quoting intact", async () => {
    const tricky = `it's a "fox" \\ $HOME \`x\` \n second line ${"\u00e9"}`;
    const body = {
      messages: [
        { role: "system", content: `Be brief. ${tricky}` },
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Hello." },
        { role: "user", content: tricky },
      ],
      temperature: 0.3,
      max_tokens: 64,
    };
    const s = studioSnippets(catalog.get("sandbox/chat")!, body, BASE);
    const sh = await run(["sh", "-c", `curl() { printf '%s\\0' "$@"; }\n${s.curl}`]);
    const args = sh.out.split("\0");
    expect(JSON.parse(args[args.indexOf("-d") + 1]!)).toEqual({ model: "sandbox/chat", ...body });
    const files: [string, string][] = [
      ["chat.mjs", s.javascript],
      ["chat.py", s.python],
      ...s.more.map((m): [string, string] => [
        `chat-${m.id}.${m.language === "python" ? "py" : "mjs"}`,
        m.text,
      ]),
    ];
    for (const [name, text] of files) {
      const file = join(dir, name);
      writeFileSync(file, text);
      const check = name.endsWith(".py")
        ? await run(["python3", "-m", "py_compile", file])
        : await run(["node", "--check", file]);
      expect(`${name}: ${check.err}`).toBe(`${name}: `);
      expect(text).toContain("0.3");
    }
    expect(s.javascript).toContain("max_tokens: 64,");
    expect(s.python).toContain("max_tokens=64,");
    // Anthropic's SDKs and the AI SDK take the system prompt apart from the turns.
    for (const m of s.more) {
      expect(m.text).toContain(
        `system${m.language === "python" ? "=" : ": "}${JSON.stringify(body.messages[0]!.content)}`,
      );
      expect(m.text).not.toContain('"role": "system"');
    }
    expect(s.more[0]!.text).toContain("max_tokens: 64,");
    // Without a conversation: the one example message, no parameters.
    const plain = studioSnippets(catalog.get("sandbox/chat")!, {}, BASE);
    expect(plain.curl).toContain('"messages":[{"role":"user","content":"Hello!"}]');
    expect(plain.curl).not.toContain("temperature");
  });

  test("text: chat completions at {public_url}/v1 with a Bearer key", async () => {
    const s = studioSnippets(catalog.get("sandbox/chat")!, { input_tokens: 10 }, `${BASE}/`);
    expect(s.curl).toContain(`'${BASE}/v1/chat/completions'`);
    expect(s.curl).toContain(`'Authorization: Bearer ${KEY_PLACEHOLDER}'`);
    expect(s.javascript).toContain(`baseURL: "${BASE}/v1"`);
    expect(s.python).toContain(`base_url="${BASE}/v1"`);
  });
});
