// The console's only script (CSP: script-src 'self'; no inline code, no eval). Every behaviour is
// switched on by data-* attributes in the server's markup, and every page works without it:
//   data-dialog="ID"        on a button: opens <dialog id=ID> (modal) instead of following its form or
//                           link (e.g. `Revoke` opens the dialog holding the `Revoke key` form)
//   data-dialog-close       on a button inside a dialog: closes it (and is what the dialog focuses
//                           first when it has no field: the safe Cancel, not the destructive button)
//   data-copy="ID"          on a button (rendered `hidden`): shown, and copies #ID's value or text
//   data-autosubmit         on a select: submits its form when changed (the account switcher)
//   data-chart="ID"         on an element: draws a uPlot chart from <script type="application/json"
//                           id=ID> {"x": [epoch seconds], "x_label", "series": [{"label", "values": [number]}],
//                           "unit": "USD"}
//   data-run-events="URL"   on an element: follows a studio run's status stream (EventSource, the API's
//                           status events) and updates its [data-run-status], [data-run-ahead] and
//                           [data-run-logs]; at a final status the page's <main> is fetched again
//                           and swapped in place (the result, or the error), a full reload only
//                           if that fetch fails
//   data-upload="ID"        on an <input type=file>: uploads the chosen file to /console/studio/upload
//                           (raw bytes, CSRF header) and puts the returned file_id in #ID; progress
//                           and errors go to #(data-upload-status); #(data-upload-preview) shows the
//                           file first (an image, a video or audio player, else its name and size)
//   data-drop-zone          around such an input: a file dropped on it is chosen as if picked
//   data-chat              on a section: its [data-chat-form] (model_id, message) is sent with fetch to
//                           /console/studio/chat with the whole conversation (messages JSON, the
//                           earlier replies' request ids); the reply streams into its bubble
//                           [data-chat-messages], then the server's `cost` event (the ledger's
//                           charge) shows its cost and [data-chat-total] the conversation's total;
//                           [data-chat-history] keeps the conversation for the Estimate (htmx,
//                           refreshed on the message box's `chat-updated` event after each reply)
// htmx enhances forms and links that carry hx-* attributes; its config is the <meta name="htmx-config">
// of the layout. State-changing htmx requests carry the page's CSRF token (<meta name="csrf-token">)
// in the X-CSRF-Token header.
import htmx from "htmx.org";
import uPlot from "uplot";

window.htmx = htmx;

function csrfToken() {
  const meta = document.querySelector('meta[name="csrf-token"]');
  return meta ? meta.getAttribute("content") : null;
}

document.body.addEventListener("htmx:configRequest", (event) => {
  const token = csrfToken();
  if (token && event.detail.verb !== "get") event.detail.headers["X-CSRF-Token"] = token;
});

document.addEventListener("click", (event) => {
  const target = event.target instanceof Element ? event.target : null;
  if (!target) return;
  const opener = target.closest("[data-dialog]");
  if (opener) {
    const dialog = document.getElementById(opener.getAttribute("data-dialog") || "");
    if (dialog && typeof dialog.showModal === "function") {
      event.preventDefault();
      dialog.showModal();
      // The safe choice first: a field to fill in, else Cancel; never the destructive button, which
      // showModal's own first-focusable rule picked (`Revoke key`: Enter revoked at once).
      const focus =
        dialog.querySelector("[autofocus]") ||
        dialog.querySelector("input:not([type=hidden]), textarea, select") ||
        dialog.querySelector("[data-dialog-close]") ||
        dialog.querySelector("button");
      if (focus) focus.focus();
    }
    return;
  }
  const closer = target.closest("[data-dialog-close]");
  if (closer) {
    const dialog = closer.closest("dialog");
    if (dialog) {
      event.preventDefault();
      dialog.close();
    }
    return;
  }
  const copier = target.closest("[data-copy]");
  if (copier) void copyFrom(copier);
});

async function copyFrom(button) {
  const source = document.getElementById(button.getAttribute("data-copy") || "");
  if (!source) return;
  const text = "value" in source ? source.value : source.textContent || "";
  const label = button.textContent;
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = "Copied";
  } catch {
    if ("select" in source) source.select();
    button.textContent = "Press Ctrl+C to copy";
  }
  setTimeout(() => {
    button.textContent = label;
  }, 2000);
}

document.addEventListener("change", (event) => {
  const target = event.target;
  if (target instanceof HTMLInputElement && target.type === "file" && target.hasAttribute("data-upload")) {
    void uploadInto(target);
    return;
  }
  if (target instanceof HTMLSelectElement && target.hasAttribute("data-autosubmit") && target.form) {
    target.form.requestSubmit();
  }
});

/** "1.2 MB": a file's size as the preview names it. */
function sizeText(bytes) {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${bytes} bytes`;
}

// The chosen file shown before it runs, from a blob: URL (CSP img-src/media-src allow blob:; the
// bytes never leave the page for it). The previous preview's URL is released.
function showPreview(input, file) {
  const holder = document.getElementById(input.getAttribute("data-upload-preview") || "");
  if (!holder) return;
  for (const m of holder.querySelectorAll("[src^='blob:']")) URL.revokeObjectURL(m.getAttribute("src"));
  const caption = document.createElement("p");
  caption.className = "hint";
  caption.textContent = `${file.name}, ${sizeText(file.size)}`;
  const type = file.type || "";
  let media = null;
  if (type.startsWith("image/")) {
    media = document.createElement("img");
    media.alt = `Preview of ${file.name}`;
  } else if (type.startsWith("video/") || type.startsWith("audio/")) {
    media = document.createElement(type.startsWith("video/") ? "video" : "audio");
    media.controls = true;
    media.setAttribute("aria-label", `Preview of ${file.name}`);
  }
  if (media) {
    media.src = URL.createObjectURL(file);
    media.setAttribute("data-upload-preview-of", file.name);
  }
  holder.replaceChildren(...(media ? [media, caption] : [caption]));
}

function dropZone(zone) {
  const input = zone.querySelector("input[type=file][data-upload]");
  if (!input) return;
  // The script uploads the file itself: the form (and htmx's estimate requests) no longer carries it.
  input.removeAttribute("name");
  const hint = zone.querySelector("[data-drop-hint]");
  if (hint) hint.hidden = false;
  zone.addEventListener("dragover", (event) => {
    event.preventDefault();
    zone.classList.add("dragging");
  });
  zone.addEventListener("dragleave", () => zone.classList.remove("dragging"));
  zone.addEventListener("drop", (event) => {
    event.preventDefault();
    zone.classList.remove("dragging");
    const files = event.dataTransfer?.files;
    if (!files || files.length === 0) return;
    input.files = files;
    void uploadInto(input);
  });
}

async function uploadInto(input) {
  const field = document.getElementById(input.getAttribute("data-upload") || "");
  const status = document.getElementById(input.getAttribute("data-upload-status") || "");
  const file = input.files?.[0];
  if (!field || !file) return;
  showPreview(input, file);
  const say = (text) => {
    if (status) status.textContent = text;
  };
  say(`Uploading ${file.name}…`);
  try {
    const res = await fetch("/console/studio/upload", {
      method: "POST",
      body: file,
      headers: {
        "content-type": file.type || "application/octet-stream",
        "x-csrf-token": csrfToken() || "",
      },
      credentials: "same-origin",
    });
    const body = await res.json().catch(() => null);
    if (res.status !== 201 || !body || typeof body.file_id !== "string") {
      const message = body?.error?.message ? body.error.message : `status ${res.status}`;
      say(`Upload refused: ${message}`);
      return;
    }
    field.value = body.file_id;
    field.dispatchEvent(new Event("change", { bubbles: true }));
    say(`Uploaded ${file.name} as ${body.file_id}.`);
  } catch {
    say("The upload did not reach the server; try again.");
  }
}

function formatTick(value, unit) {
  // Below 1, the value's own digits (0.005, 0.015): two decimals printed both as "0.01".
  const a = Math.abs(value);
  const text =
    a >= 100 ? value.toFixed(0) : a >= 1 || a === 0 ? value.toFixed(2) : String(Number(value.toFixed(6)));
  return unit ? `${text} ${unit}` : text;
}

/** An x value (epoch seconds, UTC) as the usage table writes it: "2026-11-05", or "2026-11" by month. */
function xText(seconds, label) {
  const iso = new Date(seconds * 1000).toISOString();
  return label === "Month" ? iso.slice(0, 7) : iso.slice(0, 10);
}

const PALETTE = ["#2563eb", "#d97706", "#059669", "#dc2626", "#7c3aed", "#0891b2"];

function drawChart(holder) {
  const source = document.getElementById(holder.getAttribute("data-chart") || "");
  if (!source) return;
  let data;
  try {
    data = JSON.parse(source.textContent || "{}");
  } catch {
    return;
  }
  if (!Array.isArray(data.x) || !Array.isArray(data.series)) return;
  const dark = window.matchMedia("(prefers-color-scheme: dark)").matches;
  const axisColor = dark ? "#cbd5e1" : "#334155";
  const gridColor = dark ? "#334155" : "#e2e8f0";
  const axis = { stroke: axisColor, grid: { stroke: gridColor }, ticks: { stroke: gridColor } };
  const width = () => Math.max(240, holder.clientWidth);
  const plot = new uPlot(
    {
      width: width(),
      height: 240,
      series: [
        {
          // The x series' legend: "Day 2026-11-05" under the cursor, a hint when none (uPlot's default
          // read "Time: --").
          label: String(data.x_label || "Day"),
          value: (_u, v) => (v == null ? "point at the chart" : xText(v, data.x_label)),
        },
        ...data.series.map((s, i) => ({
          label: String(s.label),
          stroke: PALETTE[i % PALETTE.length],
          width: 2,
          value: (_u, v) => (v == null ? "-" : formatTick(v, data.unit)),
        })),
      ],
      axes: [
        axis,
        // The y axis names its unit (the account's currency).
        {
          ...axis,
          size: 70,
          label: data.unit ? String(data.unit) : undefined,
          values: (_u, ticks) => ticks.map((v) => formatTick(v, "")),
        },
      ],
    },
    [data.x, ...data.series.map((s) => s.values)],
    holder,
  );
  let pending = 0;
  window.addEventListener("resize", () => {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(() => plot.setSize({ width: width(), height: 240 }));
  });
}

// The words of the server's status badges (statusBadge, src/console/requests-view.ts).
const STATUS_WORDS = {
  IN_QUEUE: "Queued",
  IN_PROGRESS: "Running",
  COMPLETED: "Succeeded",
  FAILED: "Failed",
  CANCELLED: "Cancelled",
};

function setStatus(holder, status) {
  const cell = holder.querySelector("[data-run-status]");
  if (!cell) return;
  const badge = document.createElement("span");
  badge.className = `status status-${String(status).toLowerCase()}`;
  badge.dataset.status = String(status);
  badge.textContent = STATUS_WORDS[status] ?? String(status);
  cell.replaceChildren(badge);
}

function followRun(holder) {
  const url = holder.getAttribute("data-run-events");
  if (!url || typeof EventSource !== "function") return;
  const source = new EventSource(url);
  source.addEventListener("status", (event) => {
    let s;
    try {
      s = JSON.parse(event.data);
    } catch {
      return;
    }
    setStatus(holder, s.status);
    const ahead = holder.querySelector("[data-run-ahead]");
    if (ahead) ahead.textContent = s.queue_position == null ? "—" : String(s.queue_position);
    const logs = holder.querySelector("[data-run-logs]");
    if (logs && Array.isArray(s.logs)) {
      logs.replaceChildren(
        ...s.logs.map((l) => {
          const li = document.createElement("li");
          li.textContent = `${String(l.timestamp || "")
            .replace("T", " ")
            .slice(0, 19)} UTC ${l.level} ${l.message}`;
          return li;
        }),
      );
    }
    if (s.status === "COMPLETED" || s.status === "FAILED" || s.status === "CANCELLED") {
      source.close();
      void showFinishedRun();
    }
  });
}

// The finished run's page replaces the open one's <main> without a navigation: the stream is
// closed first, so no request of this page is still open while the new content loads (a reload
// while the EventSource was winding down raced in the browser's request bookkeeping).
async function showFinishedRun() {
  try {
    const res = await fetch(window.location.href, {
      headers: { accept: "text/html" },
      credentials: "same-origin",
    });
    if (!res.ok) throw new Error(String(res.status));
    const doc = new DOMParser().parseFromString(await res.text(), "text/html");
    const fresh = doc.querySelector("main");
    const main = document.querySelector("main");
    if (!fresh || !main) throw new Error("no main");
    main.replaceChildren(...Array.from(fresh.childNodes, (n) => document.importNode(n, true)));
    enhance(main);
  } catch {
    window.location.reload();
  }
}

function chatBubble(list, role, text) {
  const li = document.createElement("li");
  li.className = `chat-${role}`;
  const who = document.createElement("strong");
  who.textContent = role === "user" ? "You" : "Reply";
  const body = document.createElement("p");
  body.className = "chat-text";
  body.textContent = text;
  li.append(who, " ", body);
  list.append(li);
  return li;
}

function chatEvents(buffer, onEvent) {
  let rest = buffer;
  for (let end = rest.indexOf("\n\n"); end !== -1; end = rest.indexOf("\n\n")) {
    const block = rest.slice(0, end);
    rest = rest.slice(end + 2);
    let name = "message";
    let data = "";
    for (const line of block.split("\n")) {
      if (line.startsWith("event:")) name = line.slice(6).trim();
      else if (line.startsWith("data:")) data += line.slice(5).trim();
    }
    onEvent(name, data);
  }
  return rest;
}

// The chat form's fields (model_id, the system prompt, temperature, max_tokens) with the whole
// conversation in `messages` instead of the typed `message`, which it already holds.
function chatBody(form, asked, replies) {
  const body = new URLSearchParams();
  for (const [k, v] of new FormData(form)) {
    if (k !== "message" && k !== "messages" && typeof v === "string") body.append(k, v);
  }
  body.set("messages", JSON.stringify(asked));
  body.set("conversation", replies.join(","));
  return body;
}

function startChat(holder) {
  const form = holder.querySelector("[data-chat-form]");
  const list = holder.querySelector("[data-chat-messages]");
  const total = holder.querySelector("[data-chat-total]");
  if (!form || !list) return;
  const messages = [];
  const replies = [];
  let busy = false;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (busy) return;
    const box = form.elements.namedItem("message");
    const text = box ? box.value : "";
    if (!text.trim()) return;
    busy = true;
    const button = form.querySelector("button[type=submit]");
    if (button) button.disabled = true;
    chatBubble(list, "user", text);
    const asked = [...messages, { role: "user", content: text }];
    const reply = chatBubble(list, "assistant", "");
    const out = reply.querySelector(".chat-text");
    const note = document.createElement("p");
    note.className = "hint chat-cost";
    reply.append(note);
    let content = "";
    let failed = null;
    let cost = null;
    try {
      const res = await fetch(form.action, {
        method: "POST",
        credentials: "same-origin",
        headers: { "x-csrf-token": csrfToken() || "", accept: "text/event-stream" },
        body: chatBody(form, asked, replies),
      });
      if (!res.ok || !res.body) {
        const body = await res.json().catch(() => null);
        failed = body?.error?.message ? body.error.message : `status ${res.status}`;
      } else {
        const reader = res.body.getReader();
        const dec = new TextDecoder();
        let buffer = "";
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          buffer = chatEvents(buffer + dec.decode(value, { stream: true }), (name, data) => {
            if (data === "[DONE]" || !data) return;
            let d;
            try {
              d = JSON.parse(data);
            } catch {
              return;
            }
            if (name === "cost") cost = d;
            else if (d.error) failed = d.error.message || "The reply failed.";
            else {
              const piece = d.choices?.[0]?.delta?.content;
              if (piece) {
                content += piece;
                out.textContent = content;
              }
            }
          });
        }
      }
    } catch {
      failed = "The reply did not arrive; try again.";
    }
    if (failed) note.textContent = `Error: ${failed}`;
    if (!failed) {
      messages.push({ role: "user", content: text }, { role: "assistant", content });
      if (box) box.value = "";
      // The Estimate (htmx) is of the conversation so far plus what is typed next.
      const history = form.querySelector("[data-chat-history]");
      if (history) history.value = JSON.stringify(messages);
      if (box) box.dispatchEvent(new Event("chat-updated"));
    }
    if (cost) {
      replies.push(cost.request_id);
      note.textContent = `${failed ? `Error: ${failed}. ` : ""}Cost: ${cost.charged}`;
      note.setAttribute("data-chat-cost", cost.charged_micro);
      if (total) total.textContent = cost.total;
    }
    busy = false;
    if (button) button.disabled = false;
  });
}

function enhance(root) {
  for (const c of root.querySelectorAll("[data-chat]")) {
    if (!c.hasAttribute("data-chatting")) {
      c.setAttribute("data-chatting", "");
      startChat(c);
    }
  }
  for (const r of root.querySelectorAll("[data-run-events]")) {
    if (!r.hasAttribute("data-following")) {
      r.setAttribute("data-following", "");
      followRun(r);
    }
  }
  for (const z of root.querySelectorAll("[data-drop-zone]")) {
    if (!z.hasAttribute("data-dropping")) {
      z.setAttribute("data-dropping", "");
      dropZone(z);
    }
  }
  for (const b of root.querySelectorAll("[data-copy][hidden]")) b.hidden = false;
  for (const c of root.querySelectorAll("[data-chart]")) {
    if (!c.hasAttribute("data-drawn")) {
      c.setAttribute("data-drawn", "");
      drawChart(c);
    }
  }
}

enhance(document);
document.body.addEventListener("htmx:load", (event) => {
  if (event.target instanceof Element) enhance(event.target);
});
