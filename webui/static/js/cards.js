// Cards and tiles as small DOM elements, for the input view and the replays.

import { h } from "./util.js";

/** A 10-20-30 card: its value 1..10 (suits do not matter in this game). */
export function valueCard(value, { small = false, cls = "" } = {}) {
  return h("span", { class: `pcard${small ? " small" : ""} ${cls}`.trim(), title: `card ${value}` }, String(value));
}

const SUIT = { C: "♣", D: "♦", H: "♥", S: "♠" };
const SUIT_NAME = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
const RANK_NAME = { A: "ace", T: "10", J: "jack", Q: "queen", K: "king" };

/** An accordion card such as "QD". */
export function playingCard(code, { small = false, cls = "" } = {}) {
  const [rank, suit] = code;
  const red = suit === "D" || suit === "H";
  return h("span", { class: `pcard${small ? " small" : ""}${red ? " red" : ""} ${cls}`.trim(), title: `${RANK_NAME[rank] || rank} of ${SUIT_NAME[suit]} (${code})` },
    rank === "T" ? "10" : rank, h("span", { class: "suit", "aria-hidden": "true" }, SUIT[suit]));
}

const SUITS = { T: "dots", S: "bams", W: "craks" };
const HONOURS = {
  DONG: ["E", "east wind", "wind"], NAN: ["S", "south wind", "wind"], XI: ["W", "west wind", "wind"], BEI: ["N", "north wind", "wind"],
  ZHONG: ["R", "red dragon", "ZHONG"], FA: ["G", "green dragon", "FA"], BAI: ["", "white dragon", "BAI"],
};

/** A mahjong tile such as "3T" or "FA", named as the judge names it. */
export function tile(name, { small = false, cls = "" } = {}) {
  const size = small ? " small" : "";
  if (HONOURS[name]) {
    const [glyph, title, kind] = HONOURS[name];
    return h("span", { class: `tile h-${kind}${size} ${cls}`.trim(), title: `${name}: ${title}` },
      h("span", { class: "t-main" }, glyph), h("span", { class: "t-sub" }, name));
  }
  const suit = name.slice(-1);
  return h("span", { class: `tile s-${suit}${size} ${cls}`.trim(), title: `${name}: ${name.slice(0, -1)} of ${SUITS[suit]}` },
    h("span", { class: "t-main" }, name.slice(0, -1)), h("span", { class: "t-sub" }, SUITS[suit]));
}
