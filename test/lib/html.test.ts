import { describe, expect, test } from "bun:test";
import { escapeHtml, html, joinHtml, raw, SafeHtml } from "../../src/lib/html.ts";

describe("html", () => {
  test("escapes a script tag in text", () => {
    const name = "<script>alert(1)</script>";
    expect(html`<td>${name}</td>`.value).toBe("<td>&lt;script&gt;alert(1)&lt;/script&gt;</td>");
  });

  test("escapes attribute injection with either quote", () => {
    const v = `x" onmouseover="alert(1)`;
    expect(html`<input value="${v}">`.value).toBe('<input value="x&quot; onmouseover=&quot;alert(1)">');
    const w = "x' autofocus onfocus='alert(1)";
    expect(html`<input value='${w}'>`.value).toBe("<input value='x&#39; autofocus onfocus=&#39;alert(1)'>");
  });

  test("escapes ampersands once", () => {
    expect(html`${"a&amp;b"}`.value).toBe("a&amp;amp;b");
    expect(escapeHtml(`&<>"'`)).toBe("&amp;&lt;&gt;&quot;&#39;");
  });

  test("numbers and bigints render as text", () => {
    expect(html`${42} ${-1.5} ${12345678901234567890n}`.value).toBe("42 -1.5 12345678901234567890");
  });

  test("null, undefined and false render nothing", () => {
    expect(html`[${null}${undefined}${false}]`.value).toBe("[]");
    const on = false;
    expect(html`<p>${on && html`<b>on</b>`}</p>`.value).toBe("<p></p>");
  });

  test("arrays are rendered item by item and joined", () => {
    const rows = ["<a>", "b"].map((x) => html`<li>${x}</li>`);
    expect(html`<ul>${rows}</ul>`.value).toBe("<ul><li>&lt;a&gt;</li><li>b</li></ul>");
    expect(html`${["<", 1, null, ["&"]]}`.value).toBe("&lt;1&amp;");
  });

  test("SafeHtml and raw pass through unescaped", () => {
    const inner = html`<b>${"<i>"}</b>`;
    expect(inner).toBeInstanceOf(SafeHtml);
    expect(html`<p>${inner}</p>`.value).toBe("<p><b>&lt;i&gt;</b></p>");
    expect(html`${raw("<hr>")}`.value).toBe("<hr>");
    expect(String(html`<br>`)).toBe("<br>");
  });

  test("joinHtml escapes strings and keeps SafeHtml", () => {
    expect(joinHtml(["<", html`<br>`, "b"], ", ").value).toBe("&lt;, <br>, b");
  });

  test("objects and true are refused", () => {
    expect(() => html`${{} as never}`).toThrow(TypeError);
    expect(() => html`${true as never}`).toThrow(TypeError);
  });
});
