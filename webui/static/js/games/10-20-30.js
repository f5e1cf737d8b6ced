// 10-20-30 replay (trace version 2, format: docs/traces.md): the seven piles and
// the deck after every deal, each pick-up with its three cards and the combination that matched,
// and for a draw the deal whose state came back.

import { h } from "../util.js";
import { valueCard } from "../cards.js";

const VALUE = (ch) => (ch === "T" ? 10 : Number(ch));
const COMBOS = { a: "first two + last", b: "first + last two", c: "last three" };

/**
 * The trace as a list of events in play order: {deal, card} and {pick, combo, cards}.
 * Deal k deals cards[k - 1] and is followed by after[k - 1] (a base-36 digit) pick-ups;
 * pick-up j puts cards[52 + 3j .. 55 + 3j] under the deck.
 */
function events(trace) {
  const out = [];
  let pick = 0;
  for (let deal = 1; deal <= trace.after.length; deal += 1) {
    out.push({ deal, card: VALUE(trace.cards[deal - 1]) });
    for (let n = parseInt(trace.after[deal - 1], 36); n > 0; n -= 1, pick += 1) {
      const from = 52 + 3 * pick;
      out.push({ pick, combo: trace.picks[pick], cards: Array.from(trace.cards.slice(from, from + 3), VALUE) });
    }
  }
  if (pick !== trace.picks.length) throw new Error("the trace's pick-ups do not add up");
  return out;
}

/**
 * Play the trace from the deck: a frame per deal, one per pick-up (before the three cards
 * leave their pile), and one for the settled piles after a deal's pick-ups.
 */
export function frames(data) {
  const { trace } = data;
  const deck = data.input.trim().split(/\s+/).map(Number);
  const piles = Array.from({ length: 7 }, () => []);
  const gone = Array(7).fill(false);
  const out = [];
  const settledAt = [0]; // settledAt[k]: the frame showing the state after deal k and its pick-ups
  const snap = (extra) => out.push({ piles: piles.map((p) => p.slice()), gone: gone.slice(), deck: deck.slice(), ...extra });
  let deal = 0;
  let pile = null;
  let returned = 0;
  const settle = () => {
    if (returned) snap({ kind: "settled", deal, pile, returned });
    settledAt[deal] = out.length - 1;
    returned = 0;
  };

  snap({ kind: "start", deal: 0 });
  for (const event of events(trace)) {
    if (event.deal) {
      if (deal) settle();
      // Round the piles still there: the next one right of the last deal's, or back to pile 0.
      if (gone.every(Boolean)) throw new Error(`deal ${event.deal} of the trace comes after every pile is gone`);
      do pile = pile === null ? 0 : (pile + 1) % 7; while (gone[pile]);
      ({ deal } = event);
      const card = deck.shift();
      if (card !== event.card) throw new Error(`deal ${deal} of the trace is a ${event.card} where the deck has a ${card}`);
      piles[pile].push(card);
      snap({ kind: "deal", deal, pile, value: card, hl: [piles[pile].length - 1] });
      continue;
    }
    const { combo, cards } = event;
    const p = piles[pile];
    const n = p.length;
    const at = combo === "a" ? [0, 1, n - 1] : combo === "b" ? [0, n - 2, n - 1] : [n - 3, n - 2, n - 1];
    if (n < 3 || at.some((j, k) => p[j] !== cards[k])) {
      throw new Error(`pick-up ${event.pick + 1} of the trace takes ${cards.join(" ")}, which pile ${pile + 1} does not hold`);
    }
    snap({ kind: "pick", deal, pile, combo, cards, hl: at });
    for (const j of [...at].sort((a, b) => b - a)) p.splice(j, 1);
    deck.push(...cards);
    if (!p.length) gone[pile] = true;
    returned += 3;
  }
  settle();
  const last = out[out.length - 1];
  out.push({ ...last, kind: "end", returned: last.kind === "settled" ? last.returned : 0 });
  checkEnd(trace, piles, deck);
  const marks = [];
  if (data.outcome === "draw" && Number.isInteger(trace.seen) && settledAt[trace.seen] !== undefined) {
    const first = settledAt[trace.seen];
    out[first] = { ...out[first], seenAgain: deal };
    out[out.length - 1].firstSeen = { deal: trace.seen, frame: first };
    marks.push({ index: first, label: `The final state, first seen after deal ${trace.seen}` });
  }
  return { frames: out, marks };
}

function checkEnd(trace, piles, deck) {
  const values = (text) => Array.from(text || "", VALUE);
  const same = (a, b) => a.length === b.length && a.every((v, k) => v === b[k]);
  if (typeof trace.deck !== "string" || !Array.isArray(trace.piles)) return;
  if (!trace.piles.every((p, k) => same(values(p), piles[k])) || !same(values(trace.deck), deck)) {
    throw new Error("the replayed game does not end in the state the trace records");
  }
}

/** A label before a step's description (a space after it, for screen readers and copying). */
function tag(text, cls = "") { return [h("span", { class: `tag ${cls}`.trim() }, text), " "]; }

function describe(f, data) {
  switch (f.kind) {
    case "start": return [tag("Start"), "52 cards in the deck. One card goes to each of the seven piles, then round and round."];
    case "deal": return [tag(`Deal ${f.deal}`), `A ${f.value} onto pile ${f.pile + 1}.`];
    case "pick": {
      const sum = f.cards.reduce((a, b) => a + b, 0);
      return [tag("Pick up", "tag-hl"), `${COMBOS[f.combo]} of pile ${f.pile + 1}: ${f.cards.join(" + ")} = ${sum}. They go under the deck.`];
    }
    case "settled": return [tag(`After deal ${f.deal}`), `${f.returned} cards went under the deck.`,
      f.seenAgain ? [" ", tag("Seen again", "tag-draw"), `This state comes back after deal ${f.seenAgain}.`] : ""];
    default: {
      const parts = [tag("Result"), h("code", {}, data.line || ""), " "];
      if (data.outcome === "win") parts.push("Every pile has been picked up.");
      else if (data.outcome === "loss") parts.push("The deck is empty.");
      else if (f.firstSeen) parts.push(tag("Draw", "tag-draw"), `This state was first seen after deal ${f.firstSeen.deal} (step ${f.firstSeen.frame}): the game would repeat forever.`);
      return parts;
    }
  }
}

export function render(f, { forward }, data) {
  const current = f.kind === "start" ? null : f.pile;
  const maxLen = Math.max(1, ...f.piles.map((p) => p.length));
  const step = Math.max(9, Math.min(22, Math.floor(260 / maxLen)));
  const piles = h("div", { class: "piles", role: "list", "aria-label": "The seven piles" }, f.piles.map((cards, k) => {
    const hl = k === current && f.hl ? f.hl : [];
    return h("div", { class: `pile${k === current ? " current" : ""}${f.gone[k] ? " gone" : ""}`, role: "listitem",
      "aria-label": `Pile ${k + 1}: ${f.gone[k] ? "gone" : cards.join(" ") || "empty"}` },
    h("div", { class: "pile-head" }, h("span", { class: "pile-word" }, "pile "), `${k + 1} · ${f.gone[k] ? "gone" : cards.length}`),
    h("div", { class: "pile-cards", style: { "--step": `${step}px` } }, cards.map((v, j) => {
      let cls = hl.includes(j) ? "hl" : "";
      if (f.kind === "deal" && forward && hl.includes(j)) cls += " new";
      return valueCard(v, { cls });
    })));
  }));
  const returned = f.kind === "settled" || f.kind === "end" ? f.returned : 0;
  // A group, not a list: its cards are images with names of their own, not list items.
  const deck = h("div", { class: "deck", role: "group", "aria-label": `The deck, top card first: ${f.deck.length} cards` },
    f.deck.map((v, j) => valueCard(v, { small: true, cls: j >= f.deck.length - returned ? "returned" : "" })));
  const stage = [piles, h("div", { class: "stage-label" }, `Deck · ${f.deck.length} card${f.deck.length === 1 ? "" : "s"}, top first`), deck];
  if (f.seenAgain) stage.push(h("div", { class: "state-seen" }, `This state (the piles and the deck) comes back after deal ${f.seenAgain}: that repeat makes the game a draw.`));
  return { stage, note: describe(f, data) };
}

/** The deck as cards, for the input panel. */
export function inputView(data) {
  return data.input.trim().split(/\s+/).map((v) => valueCard(Number(v), { small: true }));
}
