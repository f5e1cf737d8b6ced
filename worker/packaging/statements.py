"""Each game's statement, in LaTeX as the Kattis problem package format's legacy version takes it
(``problem_statement/problem.en.tex``): the rules as Dealer's engines play them (the exact
rules every accepted solution agrees on, where published statements are vague), in the project's
own words, then the input and output formats. The samples are the package's
``data/sample`` files, which the format's tools print under the statement."""

from __future__ import annotations

#: Each game's name in ``problem.yaml`` and its statement, and where the puzzle comes from.
NAMES = {"10-20-30": "10-20-30", "accordion": "Accordian Patience", "mahjong": "Chinese Mahjong"}
SOURCES = {"10-20-30": "UVa Online Judge 246", "accordion": "UVa Online Judge 127",
           "mahjong": "UVa Online Judge 11210"}

_BODIES = {
    "10-20-30": r"""
A deck of 52 cards is played as a solitaire, with cards that count only by value: aces count 1,
the cards 2 to 9 count what they show, and tens and face cards count 10. The deck lies face down;
its top card is dealt first and cards put back go under it.

To start, deal one card face up onto each of seven piles, from left to right. Then deal one card
at a time, each onto the next pile to the right of the last one dealt to, going back to the
leftmost pile after the rightmost. A pile that has been emptied is gone for the rest of the game
and is passed over.

After a card is dealt onto a pile of three or more cards, look at three of the pile's cards, in
this order: its two bottom cards with its top card; its bottom card with its two top cards; its
three top cards. The first three whose values add up to 10, 20 or 30 are taken off the pile and
put under the deck, in the order they lay in the pile from the bottom. Look again at the pile
as it is now, and go on until no three of them add up so; only then is the next card dealt.

Once a pile is settled, the game may end, and it ends at the first of these that holds:
\begin{itemize}
\item every pile is gone: the game is won;
\item the deck is empty: the game is lost;
\item the piles (each with its cards in order) and the deck are exactly as they were after some
  earlier deal of this game: the game would go round for ever, and is a draw.
\end{itemize}
Each deck is played afresh: nothing of one game carries over to the next.

\section*{Input}
The input holds one or more decks, then a line holding a single 0. A deck is 52 integers from 1 to
10, its top card first, separated by spaces and line breaks; a deck may be split over lines
anywhere. Every deck holds four cards of each value 1 to 9 and sixteen of value 10.

\section*{Output}
For each deck, one line: \texttt{Win : N}, \texttt{Loss: N} or \texttt{Draw: N}, as the game
ends, where $N$ is the number of cards dealt in the game, the first seven included. Mind the space
before the colon after \texttt{Win} and its absence after \texttt{Loss} and \texttt{Draw}.
""",
    "accordion": r"""
Cards are dealt from a full deck of 52, one at a time, left to right into a row of piles, each
card starting a pile of its own. A card matches another when they have the same rank or the same
suit. Only the top card of a pile ever moves, and it moves with nothing under it:
\begin{itemize}
\item a top card that matches the top card of the pile three places to its left moves onto that
  pile; otherwise, one that matches the top card of the pile just to its left moves onto it;
\item when several top cards could move, the leftmost of them moves first;
\item a pile left empty disappears, and the piles to its right close the gap.
\end{itemize}
After a move, look again at the whole row for a card that can move. Only when no card can move
is the next card dealt. When the last card is dealt and nothing more can move, the game is over.

\section*{Input}
The input holds one or more decks, then a line starting with \texttt{\#}. A deck is 52 distinct
cards in the order they are dealt, each written as its rank (one of \texttt{A23456789TJQK}, with
\texttt{T} for ten) then its suit (one of \texttt{CDHS}), separated by spaces and line breaks; a
deck is usually written on two lines of 26 cards, but may be split anywhere.

\section*{Output}
For each deck, one line: the number of piles left, then \texttt{piles remaining:} (or
\texttt{pile remaining:} when one pile is left), then the number of cards in each pile, from left
to right, separated by single spaces.
""",
    "mahjong": r"""
Mahjong is played with 34 kinds of tile, four copies of each: the suit tiles \texttt{1T} to
\texttt{9T}, \texttt{1S} to \texttt{9S} and \texttt{1W} to \texttt{9W}, and the honours
\texttt{DONG}, \texttt{NAN}, \texttt{XI}, \texttt{BEI}, \texttt{ZHONG}, \texttt{FA} and
\texttt{BAI}.

A hand of 14 tiles wins when it splits into one pair (two copies of a kind) and four sets, each
set either three copies of one kind, or three suit tiles of one suit with consecutive numbers
(such as \texttt{4S 5S 6S}; numbers do not run on from 9 to 1, and honours never make such a
run). No other shape of hand wins here.

A hand of 13 tiles waits for a kind of tile when one more tile of that kind would make it a
winning hand. A tile of which the hand already holds all four copies cannot be drawn, so the
hand never waits for it.

\section*{Input}
The input holds one or more hands, one a line, then a line holding a single 0. A hand is 13 tiles
separated by spaces, in any order; no hand holds more than four copies of a kind.

\section*{Output}
For the $k$-th hand, one line: \texttt{Case $k$:} followed by the kinds the hand waits for, each
after one space, in the order \texttt{1T}~\ldots~\texttt{9T}, \texttt{1S}~\ldots~\texttt{9S},
\texttt{1W}~\ldots~\texttt{9W}, \texttt{DONG}, \texttt{NAN}, \texttt{XI}, \texttt{BEI},
\texttt{ZHONG}, \texttt{FA}, \texttt{BAI}; or \texttt{Case $k$: Not ready} when it waits for none.
Hands are numbered from 1.
""",
}


def statement(game: str) -> str:
    """``game``'s statement, the whole ``problem.en.tex``."""
    return f"\\problemname{{{NAMES[game]}}}\n{_BODIES[game]}"
