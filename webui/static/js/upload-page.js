// The upload page: choose or drop a file, send it with a progress bar, then follow its reading until the
// first cases are solved, and on to the job.
//
// Where a failed upload ends, one rule: what the service refuses as the file arrives (a 4xx of
// POST /api/jobs: no judge file, the wrong game, too large) is shown here, with the lines around its
// fault, and no job is made; a job that was made and failed later (a fault past the file's start, which
// the split meets) is shown on its job page, with every fault and its partial output, as the dashboard
// and a reload show it. The form without this script follows the same rule (webui/pages.py: upload).

import { $, count, seconds, size } from "./util.js";
import { attachDropzone, snippet, uploadFile, whenRead } from "./upload.js";

const form = $("#upload-form");
const input = $("#file");
const chosen = $("#chosen");
const button = $("#upload-button");
const cancel = $("#upload-cancel");
const progress = $("#upload-progress");
const errorBox = $("#upload-error");
const info = $("#upload-info");
const limit = Number(form.dataset.max);
let file = null;
let xhr = null;

function choose(picked) {
  file = picked;
  chosen.textContent = `${picked.name} · ${size(picked.size)}`;
  hideError();
  info.hidden = true;
}

attachDropzone($("#dropzone"), input, choose);
// This script checks the file itself (and says so in words): the browser's "required" would stop a
// dropped file's form where a script could not fill the field.
form.noValidate = true;

function hideError() { errorBox.hidden = true; $("#upload-snippet").hidden = true; }

async function showError(message, title = "The file was not accepted") {
  errorBox.querySelector(".alert-title").textContent = title;
  $("#upload-error-text").textContent = message;
  const old = $("#upload-snippet");
  const lines = await snippet(message, file).catch(() => null);
  if (lines) { lines.id = "upload-snippet"; old.replaceWith(lines); } else old.hidden = true;
  errorBox.hidden = false;
  errorBox.scrollIntoView({ block: "nearest", behavior: "smooth" });
}

function setBusy(busy) {
  button.disabled = busy;
  cancel.hidden = !busy;
  input.disabled = busy;
}

function showProgress(sent, total, startedAt) {
  const pct = total ? (sent / total) * 100 : 0;
  const bar = progress.querySelector(".bar");
  bar.setAttribute("aria-valuenow", pct.toFixed(1));
  bar.firstElementChild.style.width = `${pct}%`;
  progress.querySelector(".pct").textContent = `${Math.floor(pct)}%`;
  const elapsed = (Date.now() - startedAt) / 1000;
  const speed = elapsed > 0.2 ? sent / elapsed : 0;
  let text = `${size(sent)} of ${size(total)}`;
  if (speed) text += ` · ${size(speed)}/s`;
  if (speed && sent < total) text += ` · ${seconds((total - sent) / speed)} left`;
  progress.querySelector(".upload-text").textContent = text;
}

/** After the upload, the same bar follows the split: the bytes of the file read so far. */
function showRead(job) {
  const pct = job.size ? (job.bytes_read / job.size) * 100 : 0;
  const bar = progress.querySelector(".bar");
  bar.setAttribute("aria-label", "Reading the file");
  bar.setAttribute("aria-valuenow", pct.toFixed(1));
  bar.firstElementChild.style.width = `${pct}%`;
  progress.querySelector(".pct").textContent = `${Math.floor(pct)}% read`;
  progress.querySelector(".upload-text").textContent = `reading the file: ${size(job.bytes_read)} of `
    + `${size(job.size)} · ${count(job.total)} ${job.total === 1 ? "case" : "cases"} so far`;
}

cancel.addEventListener("click", () => { if (xhr) xhr.abort(); });

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  hideError();
  info.hidden = true;
  if (!file) { await showError("choose a file first (or drop one on the box above)", "No file chosen"); return; }
  if (file.size > limit) { await showError(`the file is ${size(file.size)}, over the limit of ${size(limit)}`); return; }
  if (file.size === 0) { await showError("the file is empty"); return; }
  setBusy(true);
  progress.hidden = false;
  const startedAt = Date.now();
  showProgress(0, file.size, startedAt);
  let job;
  try {
    const expected = $("#expected").files[0] || null;
    job = await uploadFile(file, $("#game").value, (sent, total) => showProgress(sent, total, startedAt), (x) => { xhr = x; }, expected, Boolean($("#shared")?.checked));
  } catch (error) {
    setBusy(false);
    progress.hidden = true;
    await showError(error.message);
    return;
  } finally {
    xhr = null;
  }
  showProgress(file.size, file.size, startedAt);
  cancel.hidden = true;
  info.hidden = false;
  info.replaceChildren(`Uploaded as job #${job.id} (${job.game}). Reading the file… `,
    Object.assign(document.createElement("a"), { href: `/jobs/${job.id}`, textContent: "Open the job" }));
  try {
    job = await whenRead(job.id, (waiting, ms) => {
      if (waiting.status === "queued") {
        if (ms > 3000) info.firstChild.textContent = `Uploaded as job #${job.id}. Waiting for a worker to read it… `;
        return;
      }
      // One bar, one sentence: the bar's text says how far the reading is; this line only names the job.
      showRead(waiting);
      info.firstChild.textContent = `Uploaded as job #${job.id} (${waiting.game}). `;
    });
  } catch (error) {
    setBusy(false);
    await showError(error.message, "Cannot follow the job");
    return;
  }
  info.firstChild.textContent = job.status === "failed" ? `Job #${job.id} failed. Opening it…`
    : `Job #${job.id}: ${count(job.total || job.done)} ${job.total ? "cases" : "solved so far"}. Opening it…`;
  // With an output to check, its verdict is what the user came for.
  window.location.assign(job.checks && job.checks.length && job.status !== "failed" ? `/checks/${job.checks[0]}` : `/jobs/${job.id}`);
});
