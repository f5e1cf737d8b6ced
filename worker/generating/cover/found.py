"""Cases found by :mod:`.search` (``python -m worker.generating.cover.search`` writes this file)."""

FOUND: dict[str, dict[str, str]] = {
    '10-20-30': {
        'a loss in the fewest deals':
            '3 5 10 7 10 6 5 2 7 9 4 1 1 10 2 6 8 2 4 8 9 4 3 7 10 8 10 3 10 10 10 5 10 10 10 3 10 5 1 8 7 10 9 4 6 10 1 6 9 10 10 2',
        'a loss in the most deals':
            '5 7 10 8 10 6 10 4 1 2 10 10 4 10 9 3 9 6 10 10 2 10 4 6 7 5 10 7 3 10 10 6 3 8 9 10 8 10 1 5 4 10 8 2 9 7 2 1 5 1 3 10',
        'the most pick-ups after one deal':
            '6 4 9 2 7 10 5 1 10 6 2 4 2 3 10 3 3 10 4 6 2 9 5 10 4 10 5 8 10 10 5 10 3 10 10 1 10 10 10 7 7 1 9 10 8 7 6 8 1 9 10 8',
        'a second pick-up after one deal of the first + last two':
            '6 3 3 10 10 9 10 10 2 9 9 9 4 10 10 5 10 1 2 7 8 10 8 1 7 5 4 10 6 7 10 7 1 8 6 10 4 10 3 3 2 10 5 1 2 4 6 8 5 10 10 10',
        'a second pick-up after one deal of the first two + last':
            '10 6 10 10 10 10 10 2 8 5 4 1 7 8 9 10 1 10 5 7 1 3 1 5 6 7 10 5 10 8 10 4 3 10 2 3 2 7 3 4 9 10 10 8 6 10 4 2 10 9 9 6',
        'a draw in the fewest deals':
            '2 2 4 3 1 9 4 7 6 7 8 2 9 7 9 1 4 1 9 7 3 5 8 5 5 6 8 2 8 4 3 3 6 6 1 5 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10',
        'a draw in the most deals':
            '7 8 5 10 10 2 7 4 4 4 10 10 3 5 6 3 8 10 6 10 10 10 7 10 9 1 8 7 10 3 10 8 2 5 3 10 9 10 1 10 9 2 1 4 9 6 10 1 5 6 10 2',
        'the longest cycle before a draw':
            '9 1 10 10 2 4 5 5 9 2 6 3 10 10 7 10 1 4 10 7 10 10 1 8 9 7 5 10 8 10 3 8 6 2 10 10 5 1 10 10 2 10 8 6 3 7 4 3 10 4 6 9',
        'a draw whose state was first seen soonest':
            '2 2 4 3 1 9 4 7 6 7 8 2 9 7 9 1 4 1 9 7 3 5 8 5 5 6 8 2 8 4 3 3 6 6 1 5 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10',
        'a win in the fewest deals':
            '2 6 7 8 10 7 6 7 4 8 10 10 3 5 1 10 5 2 10 10 9 8 10 9 3 2 10 10 5 10 7 4 3 9 10 10 1 2 9 10 10 1 8 10 10 4 1 6 6 4 3 5',
        'a win in the most deals':
            '6 1 8 6 10 10 6 6 7 10 10 1 7 4 4 2 9 10 9 10 2 3 8 7 10 10 4 3 8 5 10 10 8 3 10 3 5 10 10 9 5 4 1 7 9 10 5 1 10 2 10 2',
        "a deck whose game passes through a state of the next deck's":
            '7 9 3 10 1 9 3 8 5 10 4 7 10 5 9 10 10 7 6 8 6 10 4 10 6 2 2 1 8 10 5 1 2 3 3 2 10 7 10 10 10 6 10 10 10 8 10 5 4 4 9 1',
        'the next deck':
            '7 9 3 7 6 9 5 8 5 5 1 2 3 3 9 10 7 10 10 10 6 10 4 10 8 10 5 4 4 9 1 10 10 10 10 4 6 1 7 2 10 8 2 3 6 1 10 8 2 10 10 10',
    },
    'accordion': {
        'the most moves after one deal':
            '6H 3S 7D 9S JD 2S AC 8S QC TD 9C 4S 2D JH AH 5C 6S AD 7S 3D 7H KC TS 4C QH 3C TH 9H 7C 2H QS 4D AS KD TC 8D QD 6D 6C 5S 3H KS 4H 2C 9D 5D JS KH JC 5H 8C 8H',
        'the most moves of three piles':
            'JC 3H 6C 4H 7D 7C 5C TS 9D 8H TC 7H JS QC 5S TD 2S 8D KH QD AS KC 5D JD 6S 9S AD QS 8C 6H JH AH TH AC 4D 2C 3C KS 5H 8S QH 9C KD 2H 7S 6D 4S 2D 9H 3D 3S 4C',
        'two piles':
            '6H 8S KH TH 4D JH 4C 5H TS 3S 7S KS 3C TC QS 5D 5S 4H QC 8H 6C AS 3H 7C AC JS 8C JC 5C JD 6S 4S 9H 9S KC QH QD 2D TD 6D 9C 2S 3D 2H KD 9D 2C 8D AD 7H 7D AH',
        'one pile (a win)':
            'QH QC TH 9D 6H 7D 2C 2H 3D 5S 5C 4S 3C 8S 8C JH TC JS 5H 4H 7S 7H 2D AH 2S 4C AS TS QS 9H 9C TD 6D KH JD QD KS 6C AC AD 7C 4D 6S 5D KD JC 3S KC 8H 9S 8D 3H',
        'the most piles':
            '8S KH 6S TH 3S AC 7D 6H QD 3C QS JC 9H AD 2H KD QC 7S 5C 4D JH 2S 8C 5D KC 3D 9C 4S 8H JD 6C TS 3H KS 5H 9S 7C 2D AH 8D 7H 9D QH 4C AS TC 6D 2C 4H JS TD 5S',
    },
}
