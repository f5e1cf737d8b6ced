// Small helpers shared by every page: DOM building, JSON requests, number and time formats.

export const $ = (selector, root = document) => root.querySelector(selector);
export const $$ = (selector, root = document) => Array.from(root.querySelectorAll(selector));

const SVG_NS = "http://www.w3.org/2000/svg";

function build(element, attrs, children) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") element.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(element.dataset, value);
    else if (key === "style" && typeof value === "object") Object.assign(element.style, value);
    else element.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

/** h("a", {href: "/x", class: "btn"}, "text", child...) builds an HTML element. */
export const h = (tag, attrs, ...children) => build(document.createElement(tag), attrs, children);
/** The same for SVG elements. */
export const s = (tag, attrs, ...children) => build(document.createElementNS(SVG_NS, tag), attrs, children);

export class ApiError extends Error {
  constructor(message, status) { super(message); this.status = status; }
}

/** The session's CSRF token (a <meta> the server renders when the service has keys), or "". */
export function csrfToken() {
  const meta = document.querySelector('meta[name="csrf-token"]');
  return meta ? meta.content : "";
}

/** Headers for a request: JSON answers, and the CSRF token on anything that changes state. */
export function requestHeaders(method = "GET", extra = {}) {
  const headers = { Accept: "application/json", ...extra };
  const token = csrfToken();
  if (token && !["GET", "HEAD", "OPTIONS"].includes(method.toUpperCase())) headers["X-CSRF-Token"] = token;
  return headers;
}

/** fetch a JSON API URL; an error answer becomes an ApiError with the server's message. */
export async function api(url, options = {}) {
  let response;
  try {
    response = await fetch(url, { ...options, headers: requestHeaders(options.method, options.headers) });
  } catch (error) {
    throw new ApiError("the server cannot be reached", 0);
  }
  if (response.status === 204) return null;
  let body = null;
  try { body = await response.json(); } catch { /* not JSON */ }
  if (!response.ok) throw new ApiError((body && body.error) || `${response.status} ${response.statusText}`, response.status);
  return body;
}

export const readJSON = (id) => JSON.parse(document.getElementById(id).textContent);

let gameList = null;
export const games = () => (gameList ||= readJSON("games-data"));
export const gameBySlug = (slug) => games().find((g) => g.slug === slug);

const NUMBER = new Intl.NumberFormat("en-US");
export const count = (n) => NUMBER.format(Math.round(n || 0));

export function size(bytes) {
  let value = bytes || 0;
  for (const unit of ["bytes", "KiB", "MiB", "GiB", "TiB"]) {
    if (value < 1024 || unit === "TiB") {
      return unit === "bytes" ? `${Math.trunc(value)} bytes` : `${value.toFixed(1).replace(/\.0$/, "")} ${unit}`;
    }
    value /= 1024;
  }
  return "";
}

export function seconds(value) {
  if (value === null || value === undefined) return "–";
  if (value < 1) return `${Math.round(value * 1000)} ms`;
  if (value < 60) return `${value.toFixed(1)} s`;
  const whole = Math.trunc(value);
  const minutes = Math.trunc(whole / 60);
  if (minutes < 60) return `${minutes} min ${whole % 60} s`;
  return `${Math.trunc(minutes / 60)} h ${minutes % 60} min`;
}

export function micros(value) {
  if (value === null || value === undefined) return "–";
  if (value < 1000) return `${Math.round(value)} µs`;
  if (value < 1e6) return `${(value / 1000).toFixed(1)} ms`;
  return `${(value / 1e6).toFixed(2)} s`;
}

// Every page shows times in one zone, UTC, as the server renders them (pages.py's "when"), before and after
// its scripts run: a time never changes its zone, or its form, under the reader's eyes.
const pad = (n) => String(n).padStart(2, "0");
const parts = (iso) => {
  const t = new Date(Date.parse(iso));
  return { y: t.getUTCFullYear(), mo: pad(t.getUTCMonth() + 1), d: pad(t.getUTCDate()),
    clock: `${pad(t.getUTCHours())}:${pad(t.getUTCMinutes())}:${pad(t.getUTCSeconds())}` };
};

/** An ISO time as "2026-11-30 14:05:09 UTC". */
export function utcTime(iso) {
  if (!iso) return "–";
  const p = parts(iso);
  return `${p.y}-${p.mo}-${p.d} ${p.clock} UTC`;
}

/** "12 s ago", "5 min ago", or the time (UTC) for anything older than a day. */
export function ago(iso, now = Date.now()) {
  if (!iso) return "–";
  const then = Date.parse(iso);
  const secs = Math.max(0, Math.round((now - then) / 1000));
  if (secs < 5) return "just now";
  if (secs < 60) return `${secs} s ago`;
  if (secs < 3600) return `${Math.floor(secs / 60)} min ago`;
  if (secs < 86400) return `${Math.floor(secs / 3600)} h ago`;
  return utcTime(iso);
}

/** A time (UTC) in few characters for a table column: the clock today, the day and clock this year, else the date. */
export function compactTime(iso, now = new Date()) {
  if (!iso) return "–";
  const p = parts(iso);
  const today = parts(now.toISOString());
  if (p.y === today.y && p.mo === today.mo && p.d === today.d) return p.clock;
  if (p.y === today.y) return `${p.mo}-${p.d} ${p.clock.slice(0, 5)}`;
  return `${p.y}-${p.mo}-${p.d}`;
}

/** Show every <time data-ago> relative to now (its title the time itself); every other <time> keeps the
 * server's text, which is already the page's one form. */
export function localiseTimes(root = document) {
  for (const el of $$("time[datetime]", root)) {
    const iso = el.getAttribute("datetime");
    if (!iso || iso === "None") continue;
    el.title = utcTime(iso);
    el.textContent = el.hasAttribute("data-ago") || el.dataset.f === "created" ? ago(iso) : utcTime(iso);
  }
}

export const FINISHED = ["succeeded", "failed", "cancelled"];
export const isFinished = (status) => FINISHED.includes(status);

/** The pace and the time left of a running job, as the progress text ends. */
function pace(job) {
  let text = job.rate ? ` · ${count(job.rate)} cases/s` : "";
  if (job.stalled) text += " · stalled: nothing solved for a while";
  else if (job.eta_seconds !== null && job.eta_seconds !== undefined) text += ` · ${seconds(job.eta_seconds)} left`;
  return text;
}

/** The text under a job's progress bar (the same as the server's progress_text macro): a failed job's is its
 * error, but on its own page (big), where the error is shown above, what it solved. */
export function progressText(job, big = false) {
  const handled = job.done + job.failed_cases;
  if (job.status === "queued") return "waiting for a worker";
  if (job.status === "splitting") {
    const read = job.size ? Math.trunc((100 * job.bytes_read) / job.size) : 0;
    return `${count(handled)} / about ${count(job.expected)} · file ${read}% read${pace(job)}`;
  }
  if (job.status === "failed" && big && (job.fault_count || job.failed_cases)) {
    const faults = job.fault_count ? ` · ${count(job.fault_count)} fault${job.fault_count === 1 ? "" : "s"}` : "";
    const unsolved = job.failed_cases ? ` · ${count(job.failed_cases)} not within their time budget` : "";
    return `${count(job.done)} cases solved${faults}${unsolved} · in ${seconds(job.elapsed_seconds)}`;
  }
  if (job.status === "failed") return job.error || `failed at ${count(handled)} / ${count(job.total)}`;
  let text = `${count(handled)} / ${count(job.total)}${pace(job)}`;
  if (job.status === "succeeded") text += ` · in ${seconds(job.elapsed_seconds)}`;
  if (job.status === "cancelled") text += " · cancelled";
  return text;
}

/**
 * Give the bars the server rendered their sizes: the Content-Security-Policy allows no inline
 * style attributes, so the markup carries them as data-width (percent) and data-grow.
 */
export function applySizes(root = document) {
  for (const el of $$("[data-width]", root)) el.style.width = `${el.dataset.width}%`;
  for (const el of $$("[data-grow]", root)) el.style.flexGrow = el.dataset.grow;
}

/** Update a progress block rendered by the progress() macro: one measure, the share of the cases answered
 * (while the file is read, of those it is expected to hold), for the bar, its figure and its value; rounded
 * down, so that only a job that succeeded reads 100%. A failed job's figure says so (its bar: the share of its
 * file solved). */
export function fillProgress(root, job) {
  const pct = Math.floor(job.progress * 1000) / 10;
  const failed = job.status === "failed";
  root.className = root.className.replace(/status-\S+/, `status-${job.status}`);
  const bar = $("[data-f=bar]", root);
  bar.setAttribute("aria-valuenow", pct);
  if (failed) bar.setAttribute("aria-valuetext", `failed, ${pct}% of its file solved`);
  else bar.removeAttribute("aria-valuetext");
  bar.firstElementChild.style.width = `${pct}%`;
  $("[data-f=pct]", root).textContent = failed ? "failed" : `${Math.trunc(pct)}%`;
  const text = $("[data-f=progress-text]", root);
  text.textContent = text.title = progressText(job, root.classList.contains("progress-big"));
  fitMore(root, job.status);
}

/** Offer a failed job's whole error where its line cuts it (and keep the offer while it is shown whole). */
export function fitMore(root, status = root.closest("[data-status]")?.dataset.status) {
  const more = $("[data-f=more]", root);
  if (!more || root.classList.contains("progress-big")) return;
  const line = $(".progress-text", root);
  const open = root.classList.contains("expanded");
  more.hidden = status !== "failed" || !(open || line.scrollWidth > line.clientWidth);
}

/** An outcome as a badge reads it: "not-ready" is "Not ready". */
export const outcomeLabel = (outcome) => {
  const text = String(outcome).replace(/-/g, " ");
  return text.charAt(0).toUpperCase() + text.slice(1);
};

/**
 * Follow a Server-Sent Events stream, calling handlers[name] with each event's JSON; once the stream
 * is refused (a client's share, or the web process's ceiling) or lost for good, call fallback() to poll
 * instead.
 * An "end" event closes it. Returns {close}.
 */
export function live(url, handlers, fallback) {
  if (!window.EventSource) { fallback(); return { close() {} }; }
  const source = new EventSource(url);
  let fellBack = false;
  const giveUp = () => { source.close(); if (!fellBack) { fellBack = true; fallback(); } };
  for (const [name, handle] of Object.entries(handlers)) {
    // A handler that fails (what it fetches went away meanwhile: the job was deleted) fails that update
    // alone, as a poll's does: the next event draws again.
    source.addEventListener(name, (event) => {
      Promise.resolve().then(() => handle(JSON.parse(event.data))).catch((error) => console.warn(error));
    });
  }
  source.addEventListener("end", () => source.close());
  // A stream the server ends is reconnected by the browser (CONNECTING); a refused one is CLOSED.
  source.addEventListener("error", () => { if (source.readyState === EventSource.CLOSED) giveUp(); });
  return { close() { source.close(); } };
}

export function fillStatus(el, status) {
  el.className = `badge status status-${status}`;
  el.textContent = status;
}

/** Update an outcome strip rendered by the outcome_strip() macro (outcomes in the game's order). */
export function fillOutcomes(root, counts, game) {
  const strip = $(".strip", root);
  const legend = $(".strip-legend", root);
  const order = (gameBySlug(game) || { outcomes: Object.keys(counts) }).outcomes;
  const entries = order.map((o) => [o, counts[o] || 0]).filter(([, n]) => n);
  strip.replaceChildren(...entries.map(([o, n]) => h("span", { class: `o-${o}`, style: { flexGrow: n } })));
  legend.replaceChildren(...(entries.length ? entries.map(([o, n]) => h("span", { class: "legend-item" },
    h("i", { class: `swatch o-${o}`, "aria-hidden": "true" }), `${count(n)} ${outcomeLabel(o).toLowerCase()}`)) : [h("span", { class: "muted" }, "–")]));
}

/**
 * Call fn now and then again and again: every `fast` ms while it returns true ("busy"),
 * every `slow` ms otherwise; paused while the tab is hidden. Returns {stop, now}.
 */
export function poll(fn, { fast = 1000, slow = 5000 } = {}) {
  let timer = null;
  let stopped = false;
  let busy = true;
  const run = async () => {
    clearTimeout(timer);
    if (stopped) return;
    try { busy = await fn(); } catch (error) { console.warn(error); busy = false; }
    if (!stopped) timer = setTimeout(run, document.hidden ? Math.max(slow, 10000) : busy ? fast : slow);
  };
  document.addEventListener("visibilitychange", () => { if (!document.hidden && !stopped) run(); });
  run();
  return { stop() { stopped = true; clearTimeout(timer); }, now: run };
}

/** The non-empty fields of a form as a plain object. */
export function formValues(form) {
  const values = {};
  for (const [key, value] of new FormData(form)) {
    if (typeof value === "string" && value.trim() !== "") values[key] = value.trim();
  }
  return values;
}

export const query = (params) => new URLSearchParams(Object.entries(params).filter(([, v]) => v !== "" && v !== null && v !== undefined)).toString();

/**
 * Download an export link while showing how far it is: the results are counted as they stream in
 * (one per line, after a CSV's header), against ``total()`` when it is known. Falls back to the
 * plain link where the browser cannot read a response as a stream.
 */
export function exportWithProgress(link, status, total) {
  if (!window.ReadableStream || !window.URL || !URL.createObjectURL) return;
  link.addEventListener("click", async (event) => {
    event.preventDefault();
    if (link.getAttribute("aria-busy") === "true") return;
    link.setAttribute("aria-busy", "true");
    const expected = total();
    try {
      const response = await fetch(link.href, { headers: requestHeaders() });
      if (!response.ok) throw new ApiError(await errorText(response), response.status);
      const reader = response.body.getReader();
      const parts = [];
      let lines = link.href.includes("format=csv") ? -1 : 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parts.push(value);
        for (const byte of value) if (byte === 10) lines += 1;
        status.textContent = `Exporting: ${count(Math.max(lines, 0))}${expected ? ` of ${count(expected)}` : ""} results`;
      }
      const name = /filename="([^"]+)"/.exec(response.headers.get("Content-Disposition") || "");
      const url = URL.createObjectURL(new Blob(parts, { type: response.headers.get("Content-Type") || "" }));
      const save = h("a", { href: url, download: name ? name[1] : "" });
      document.body.append(save);
      save.click();
      save.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      status.textContent = `Exported ${count(Math.max(lines, 0))} results.`;
    } catch (error) {
      status.textContent = `The export failed: ${error.message}`;
    } finally {
      link.removeAttribute("aria-busy");
    }
  });
}

async function errorText(response) {
  try { return (await response.json()).error; } catch { return `HTTP ${response.status}`; }
}
