// Accordian Patience replay (trace version 2, format: docs/traces.md): the row of piles
// after each deal and each move of a top card onto the pile one or three to its left.

import { h } from "../util.js";
import { playingCard } from "../cards.js";

/** The letter of each pile in a trace's "play": A-Z are piles 0-25, a-z piles 26-51. */
const PILES = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

export function frames(data) {
  const { play } = data.trace;
  const cards = data.input.trim().split(/\s+/);
  const piles = [];
  const out = [];
  const snap = (extra) => out.push({ piles: piles.map((p) => p.slice()), dealt: dealt, ...extra });
  let dealt = 0;
  snap({ kind: "start" });
  for (let at = 0; at < play.length; at += play[at] === "+" ? 1 : 2) {
    if (play[at] === "+") {
      piles.push([cards[dealt]]);
      dealt += 1;
      snap({ kind: "deal", card: cards[dealt - 1], at: piles.length - 1 });
      continue;
    }
    const from = PILES.indexOf(play[at]);
    const distance = Number(play[at + 1]);
    const to = from - distance;
    if (from < 0 || (distance !== 1 && distance !== 3) || to < 0 || from >= piles.length) {
      throw new Error(`the trace's move ${play.slice(at, at + 2)} is not one the row allows`);
    }
    const card = piles[from][piles[from].length - 1];
    const onto = piles[to][piles[to].length - 1];
    snap({ kind: "move", card, from, to, onto, distance });
    piles[to].push(piles[from].pop());
    const emptied = piles[from].length === 0;
    if (emptied) piles.splice(from, 1);
    snap({ kind: "moved", card, to, emptied, from });
  }
  out.push({ ...out[out.length - 1], kind: "end" });
  return { frames: out, marks: [] };
}

const match = (a, b) => (a[0] === b[0] ? "same rank" : "same suit");

function describe(f, data) {
  const tag = (text, cls = "") => [h("span", { class: `tag ${cls}`.trim() }, text), " "];
  switch (f.kind) {
    case "start": return [tag("Start"), "52 cards to deal, one at a time, onto a row of piles."];
    case "deal": return [tag(`Deal ${f.dealt}`), `${f.card} starts pile ${f.at + 1}.`];
    case "move": return [tag("Move", "tag-hl"), `${f.card} (top of pile ${f.from + 1}) goes onto ${f.onto}, ${f.distance === 3 ? "three piles" : "one pile"} to its left: ${match(f.card, f.onto)}.`];
    case "moved": return [tag("Moved"), `${f.card} is on pile ${f.to + 1}.`, f.emptied ? ` Pile ${f.from + 1} emptied and the piles to its right closed up.` : ""];
    default: return [tag("Result"), h("code", {}, data.line || ""), " No top card can move and every card is dealt."];
  }
}

export function render(f, { forward }, data) {
  const row = h("div", { class: "row-piles", role: "list", "aria-label": `${f.piles.length} piles` }, f.piles.map((pile, k) => {
    const top = pile[pile.length - 1];
    let cls = "";
    if ((f.kind === "move" && k === f.from) || (f.kind === "moved" && k === f.to)) cls = "hl";
    if (f.kind === "deal" && k === f.at) cls = `hl${forward ? " new" : ""}`;
    const target = f.kind === "move" && k === f.to;
    return h("div", { class: `apile${target ? " target" : ""}`, role: "listitem", "aria-label": `Pile ${k + 1}: ${pile.length} cards, ${top} on top` },
      h("div", { class: "stack" }, pile.length > 1 ? h("span", { class: "pcard under", "aria-hidden": "true" }) : null, playingCard(top, { cls })),
      h("span", { class: "size" }, pile.length));
  }));
  const left = 52 - f.dealt;
  return {
    stage: [h("div", { class: "stage-label" }, `Row · ${f.piles.length} pile${f.piles.length === 1 ? "" : "s"} (top cards, sizes below)`), row,
      left ? [h("div", { class: "stage-label" }, `Still to deal · ${left}`),
        h("div", { class: "deck" }, data.input.trim().split(/\s+/).slice(f.dealt).map((c) => playingCard(c, { small: true })))] : null],
    note: describe(f, data),
  };
}

export function inputView(data) {
  return data.input.trim().split(/\s+/).map((c) => playingCard(c, { small: true }));
}
