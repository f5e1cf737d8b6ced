"""``dealer package``: a problem package of a game, in the Kattis problem package format that
DOMjudge imports and Kattis' ``verifyproblem`` checks, made from what Dealer knows: the
statement (:mod:`.statements`), the samples, the ``--cover`` file and generated files with their
answers from the engines and their recipes and reports (:mod:`.recipes`), an input validator,
an accepted solution and the classic wrong ones (:mod:`.programs`, :mod:`.mistakes`), written
out or zipped (:mod:`.package`), under the rights a setter names (:mod:`.rights`).
Its modules are imported by name: the command line lists the licenses without loading the rest.
"""
