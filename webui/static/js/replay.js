// The replay player: a list of frames, one shown at a time, with play/pause, step back and
// forward, a scrubber to jump, a step number box and keyboard shortcuts.

import { $, h } from "./util.js";

/**
 * frames: anything; render(frame, {index, forward, go}) returns {stage: Node[], note: Node[]}
 * (go(i) jumps to frame i).
 * marks: [{index, label}] drawn above the scrubber (e.g. where a draw's state was first seen).
 */
export function createPlayer(root, frames, render, { marks = [] } = {}) {
  const stage = $("#stage", root);
  const note = $("#step-note", root);
  const range = $("#step-range", root);
  const stepInput = $("#step-input", root);
  const speed = $("#speed", root);
  const buttons = Object.fromEntries(["first", "back", "play", "forward", "last"].map((act) => [act, $(`[data-act=${act}]`, root)]));
  const last = frames.length - 1;
  let index = -1;
  let timer = null;

  range.max = String(last);
  stepInput.max = String(last);
  $("#step-total", root).textContent = String(last);
  $("#scrubber-marks", root).replaceChildren(...marks.map((m) => h("i", { style: { left: `${last ? (m.index / last) * 100 : 0}%` }, title: m.label })));

  function show(target) {
    const next = Math.max(0, Math.min(last, Number.isFinite(target) ? Math.trunc(target) : 0));
    const forward = next === index + 1;
    index = next;
    const view = render(frames[index], { index, forward, go: (i) => { pause(); show(i); } });
    const nodes = (list) => list.flat(Infinity).filter((item) => item !== null && item !== undefined && item !== "");
    stage.replaceChildren(...nodes(view.stage));
    note.replaceChildren(...nodes(view.note));
    range.value = String(index);
    if (document.activeElement !== stepInput) stepInput.value = String(index);
    buttons.first.disabled = buttons.back.disabled = index === 0;
    buttons.forward.disabled = buttons.last.disabled = index === last;
    root.dataset.step = String(index);
    root.dataset.atEnd = String(index === last);
  }

  function pause() {
    clearInterval(timer);
    timer = null;
    root.classList.remove("playing");
    buttons.play.setAttribute("aria-label", "Play");
  }

  function play() {
    if (last === 0) return;
    if (index >= last) show(0);
    root.classList.add("playing");
    buttons.play.setAttribute("aria-label", "Pause");
    clearInterval(timer);
    timer = setInterval(() => { if (index >= last) pause(); else show(index + 1); }, 1000 / Number(speed.value));
  }

  const toggle = () => (timer ? pause() : play());
  const step = (by) => { pause(); show(index + by); };

  buttons.first.addEventListener("click", () => { pause(); show(0); });
  buttons.back.addEventListener("click", () => step(-1));
  buttons.play.addEventListener("click", toggle);
  buttons.forward.addEventListener("click", () => step(1));
  buttons.last.addEventListener("click", () => { pause(); show(last); });
  range.addEventListener("input", () => { pause(); show(Number(range.value)); });
  stepInput.addEventListener("change", () => { pause(); show(Number(stepInput.value)); });
  speed.addEventListener("change", () => { if (timer) play(); });

  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const tag = event.target.tagName;
    // Inputs keep their keys (a focused scrubber moves by itself on the arrows).
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
    const keys = { ArrowRight: () => step(1), ArrowLeft: () => step(-1), Home: () => { pause(); show(0); },
      End: () => { pause(); show(last); }, " ": toggle };
    if (event.key === " " && tag === "BUTTON") return; // the focused button handles its own Space
    const action = keys[event.key];
    if (action) { event.preventDefault(); action(); }
  });

  show(0);
  return { show, play, pause, get index() { return index; }, last };
}
