// Uploading a judge file: XHR (for upload progress), drag and drop, and showing a parse error
// with the lines around it.

import { ApiError, api, h, requestHeaders } from "./util.js";

/** POST the file (and an output to check against it, if any; shared with every user, if asked) to /api/jobs;
 * resolves to the new job, rejects with an ApiError. */
export function uploadFile(file, game, onProgress, onStart, expected = null, shared = false) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    const body = new FormData();
    if (game) body.append("game", game);
    if (shared) body.append("shared", "true");
    body.append("file", file, file.name);
    if (expected) body.append("expected", expected, expected.name);
    xhr.open("POST", "/api/jobs");
    for (const [name, value] of Object.entries(requestHeaders("POST"))) xhr.setRequestHeader(name, value);
    xhr.responseType = "json";
    xhr.upload.addEventListener("progress", (event) => {
      if (event.lengthComputable && onProgress) onProgress(event.loaded, event.total);
    });
    xhr.addEventListener("load", () => {
      const data = xhr.response;
      if (xhr.status === 201 && data) resolve(data);
      else reject(new ApiError((data && data.error) || `the upload failed (${xhr.status} ${xhr.statusText})`, xhr.status));
    });
    xhr.addEventListener("error", () => reject(new ApiError("the upload was interrupted: the server cannot be reached", 0)));
    xhr.addEventListener("abort", () => reject(new ApiError("the upload was cancelled", 0)));
    xhr.send(body);
    if (onStart) onStart(xhr);
  });
}

/** Call onFile with a file dropped on `zone` or chosen with `input`. */
export function attachDropzone(zone, input, onFile) {
  let depth = 0;
  zone.addEventListener("dragenter", (event) => { event.preventDefault(); depth += 1; zone.classList.add("dragging"); });
  zone.addEventListener("dragover", (event) => { event.preventDefault(); event.dataTransfer.dropEffect = "copy"; });
  zone.addEventListener("dragleave", () => { depth -= 1; if (depth <= 0) { depth = 0; zone.classList.remove("dragging"); } });
  zone.addEventListener("drop", (event) => {
    event.preventDefault();
    depth = 0;
    zone.classList.remove("dragging");
    const file = event.dataTransfer.files[0];
    if (!file) return;
    // The form's own file field gets the dropped file too, so that the form holds what it shows.
    const dropped = new DataTransfer();
    dropped.items.add(file);
    input.files = dropped.files;
    onFile(file);
  });
  input.addEventListener("change", () => { if (input.files[0]) onFile(input.files[0]); });
}

/** Poll a new job until its file has been read: resolves to the job once it is solving or finished. */
export async function whenRead(jobId, onWait) {
  const started = Date.now();
  for (;;) {
    const job = await api(`/api/jobs/${jobId}`);
    if (!["queued", "splitting"].includes(job.status) || (job.status === "splitting" && job.done > 0)) return job;
    if (onWait) onWait(job, Date.now() - started);
    await new Promise((done) => setTimeout(done, Math.min(1000, 150 + (Date.now() - started) / 10)));
  }
}

// Anywhere in the message: "cannot tell which game …: read as a 10-20-30 file (the closest), line 1, column 22: …".
const POSITION = /\bline (\d+)(?:, column (\d+))?: /;
/** How much of a file is read to show the lines around an error. */
const SNIPPET_LIMIT = 32 << 20;

/** The lines around a parser error's position, with the token marked, or null. */
export async function snippet(message, file) {
  const match = POSITION.exec(message || "");
  if (!match || !file) return null;
  const line = Number(match[1]);
  const column = match[2] ? Number(match[2]) : null;
  const bytes = new Uint8Array(await file.slice(0, SNIPPET_LIMIT).arrayBuffer());
  // Columns count bytes, so cut the lines as bytes and decode each for display.
  const starts = [0];
  for (let i = 0; i < bytes.length && starts.length <= line + 1; i += 1) if (bytes[i] === 10) starts.push(i + 1);
  if (line > starts.length) return null;
  const decoder = new TextDecoder("utf-8", { fatal: false });
  const lineBytes = (n) => {
    const from = starts[n - 1];
    const to = n < starts.length ? starts[n] - 1 : bytes.length;
    return from === undefined ? null : bytes.subarray(from, to).filter((b) => b !== 13);
  };
  const pre = h("pre", { class: "snippet", tabindex: "0" });
  for (let n = Math.max(1, line - 2); n <= line + 1; n += 1) {
    const raw = lineBytes(n);
    if (raw === null) continue;
    if (n !== line || !column) {
      pre.append(plainLine(n, decoder.decode(raw), n === line));
      continue;
    }
    let end = column - 1;
    while (end < raw.length && ![32, 9, 11, 12].includes(raw[end])) end += 1;
    pre.append(...markedLine(n, decoder.decode(raw.subarray(0, column - 1)),
      decoder.decode(raw.subarray(column - 1, Math.max(end, column))), decoder.decode(raw.subarray(Math.max(end, column)))));
  }
  return pre;
}

/** A fault's lines as the service keeps them (``context``: [{line, text}]), drawn as snippet draws a file's. */
export function contextSnippet(context, line, column) {
  const pre = h("pre", { class: "snippet", tabindex: "0" });
  for (const near of context || []) {
    if (near.line !== line || !column) {
      pre.append(plainLine(near.line, near.text, near.line === line));
      continue;
    }
    let end = column - 1;
    while (end < near.text.length && !/\s/.test(near.text[end])) end += 1;
    pre.append(...markedLine(near.line, near.text.slice(0, column - 1), near.text.slice(column - 1, Math.max(end, column)),
      near.text.slice(Math.max(end, column))));
  }
  return pre;
}

// The same markup as the job page's faults rendered by the server (the snippet filter of webui/pages.py).
const plainLine = (n, text, bad) => h("span", { class: bad ? "bad-line" : null }, h("span", { class: "ln" }, n), text.slice(0, 240), "\n");

function markedLine(n, before, token, after) {
  return [h("span", { class: "bad-line" }, h("span", { class: "ln" }, n), before, h("mark", { class: "bad" }, token || " "), after.slice(0, 200)),
    h("span", { class: "caret" }, h("span", { class: "ln" }, ""), " ".repeat(before.length), "^")];
}
