// Chinese Mahjong replay (trace version 1, format: docs/traces.md): the hand, then for
// each waited tile the fourteen tiles grouped into the eye and four melds that prove it.

import { h } from "../util.js";
import { tile } from "../cards.js";

export function frames(data) {
  const hand = data.input.trim().split(/\s+/);
  const proofs = (data.trace.proofs || []).map((proof) => {
    const [wait, eye, ...melds] = proof.split("|").map((group) => group.split(" "));
    const all = [...eye, ...melds.flat()].sort().join(" ");
    if (all !== [...hand, wait[0]].sort().join(" ")) throw new Error(`the proof for ${wait[0]} does not use the hand's tiles`);
    return { kind: "proof", wait: wait[0], eye, melds };
  });
  const waits = proofs.map((p) => p.wait);
  return { frames: [{ kind: "hand", waits }, ...proofs.map((p, k) => ({ ...p, waits, k }))], marks: [] };
}

function meldName(meld) {
  return meld[0] === meld[1] ? "Pong" : "Chow";
}

export function render(f, { forward, go }, data) {
  const hand = data.input.trim().split(/\s+/);
  const tag = (text, cls = "") => [h("span", { class: `tag ${cls}`.trim() }, text), " "];
  const stage = [h("div", { class: "stage-label" }, "Hand · 13 tiles"),
    h("div", { class: "hand" }, hand.map((t) => tile(t)), f.kind === "proof" ? tile(f.wait, { cls: `hl${forward ? " new" : ""}` }) : null)];
  if (f.waits.length) {
    stage.push(h("div", { class: "stage-label" }, `Waiting for ${f.waits.length} tile${f.waits.length === 1 ? "" : "s"}`),
      h("div", { class: "waits" }, f.waits.map((w, k) => h("button", { class: "wait-pick", type: "button", "aria-pressed": String(f.k === k), "aria-label": `Show the proof for ${w}`, onclick: () => go(k + 1) }, tile(w, { small: true })))));
  }
  if (f.kind === "proof") {
    stage.push(h("div", { class: "stage-label" }, `With ${f.wait}: one eye and four melds`),
      h("div", { class: "melds" },
        h("div", { class: "meld eye" }, h("span", { class: "meld-label" }, "Eye"), h("div", { class: "meld-tiles" }, f.eye.map((t) => tile(t, { small: true })))),
        f.melds.map((meld) => h("div", { class: "meld" }, h("span", { class: "meld-label" }, meldName(meld)),
          h("div", { class: "meld-tiles" }, meld.map((t) => tile(t, { small: true })))))));
  }
  let note;
  if (f.kind === "hand") {
    note = f.waits.length ? [tag("Hand"), `Ready: ${f.waits.length} tile${f.waits.length === 1 ? "" : "s"} would complete it (${f.waits.join(", ")}). Step through them to see each proof.`]
      : [tag("Not ready"), "No tile completes this hand into an eye and four melds."];
  } else {
    note = [tag(`Wait ${f.k + 1} of ${f.waits.length}`, "tag-hl"), `${f.wait}: eye ${f.eye.join(" ")}, then ${f.melds.map((m) => `${meldName(m).toLowerCase()} ${m.join(" ")}`).join(", ")}.`];
  }
  return { stage, note };
}

export function inputView(data) {
  return data.input.trim().split(/\s+/).map((t) => tile(t, { small: true }));
}
