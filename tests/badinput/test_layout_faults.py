"""The corpus of layout faults (``tests/data/layout-faults/``, written by ``tests/support/layout_corpus.py``):
each file is a generated file of a game in one of the layouts ``dealer generate --layout`` makes, with one
mutation at one line. Its readings by the engines' readers (both cores) and by the inline service are what
the mutation says (``worker/testing/mutations.py``): the faults named at the lines it touched, as many as it
says, every case it did not touch kept, in order; and ``dealer solve`` and the service agree byte for byte
on the faults, the cases kept and the partial output. So they do on files made afresh the same way.
``tests/integration/test_layout_faults_live.py`` runs the corpus through a live service of each mode
(Celery workers)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, note, settings

from tests.support.http import post_file
from tests.support.inline import InlineDispatcher
from tests.support.layout_corpus import CORPUS, LAYOUTS, Entry, Fresh, clean, digest, entries, folder, mutants
from tests.support.plugin import sqlite_settings
from tests.support.readings import agree, by_command_line, by_reader, by_service, cores
from worker.store.database import Database
from worker.testing.mutations import Shape

ENTRIES = entries()
#: Files made afresh that the inline service is sent, after the corpus.
AFRESH = 15
corpus = pytest.mark.parametrize("entry", ENTRIES, ids=[entry.name for entry in ENTRIES])


@pytest.mark.parametrize("game, name", [(game, name) for game, layouts in LAYOUTS.items() for name in layouts])
def test_the_corpus_is_what_its_script_writes(game: str, name: str) -> None:
    made = folder(game, name)
    told = {entry.kind: entry for entry in ENTRIES if entry.game == game and entry.path.parent.name == name}
    assert sorted(told) == sorted(made)
    for kind, (data, expectation) in made.items():
        entry = told[kind]
        assert entry.path.read_bytes() == data, f"{entry.path}: run python -m tests.support.layout_corpus"
        assert (entry.line, entry.expected.faults, entry.expected.lines, entry.expected.kept,
                entry.expected.may_keep) == (expectation["line"], expectation["faults"], expectation["lines"],
                                             expectation["kept"], expectation["may_keep"])
    layout = LAYOUTS[game][name]
    assert {entry.cases for entry in told.values()} == {
        tuple(digest(text) for text in Shape.of(clean(game, layout), game, layout).texts)}
    assert {path.name for path in (CORPUS / game / name).iterdir()} == {f"{kind}.in" for kind in made} | {
        "expected.json"}


@corpus
def test_the_readers_make_of_each_file_what_its_mutation_says(entry: Entry) -> None:
    data = entry.path.read_bytes()
    for engine in cores(entry.game):
        by_reader(engine, data).holds_to(entry.expected, entry.cases, digest)


@pytest.fixture(scope="module")
def inline(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One inline service (the Flask client, the work run in the request) for the module's files, on SQLite:
    the live services of the other module run on both databases. Its one client sends every file and those made
    afresh, more in a minute than the shipped limit lets a client."""
    from webui.app import create_app

    settings = sqlite_settings(tmp_path_factory.mktemp("inline"), max_jobs_per_minute_per_client=len(ENTRIES) + AFRESH)
    db = Database(settings)
    return create_app(settings, InlineDispatcher(db, settings), config={"TESTING": True}, db=db).test_client()


@corpus
def test_the_inline_service_and_dealer_solve_agree_on_each_file(inline: Any, entry: Entry) -> None:
    data = entry.path.read_bytes()
    response = post_file(inline, data, entry.game, entry.path.name)
    assert response.status_code == 201, response.get_json()
    service = by_service(lambda path: inline.get(path).data, response.get_json()["id"])
    agree(entry.game, data, by_command_line(entry.game, entry.path), service)
    service.holds_to(entry.expected, entry.cases, digest)


@settings(max_examples=AFRESH, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fresh=mutants())
def test_the_inline_service_and_dealer_solve_agree_on_files_made_afresh(inline: Any, fresh: Fresh) -> None:
    note(repr(fresh))
    data = fresh.mutant.data
    response = post_file(inline, data, fresh.game)
    assert response.status_code == 201, response.get_json()
    service = by_service(lambda path: inline.get(path).data, response.get_json()["id"])
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "judge.in"
        path.write_bytes(data)
        agree(fresh.game, data, by_command_line(fresh.game, path), service)
    service.holds_to(fresh.mutant.expected, fresh.shape.texts)
