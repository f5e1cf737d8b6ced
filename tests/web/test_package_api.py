"""``POST /api/package`` and the Generate form's "Download a problem package": the zip ``dealer package``
writes for the same recipes, made within the request and stored nowhere; what cannot be made is a
``400`` naming the field; on SQLite and PostgreSQL (the ``client`` fixture)."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.support.http import post_file
from tests.support.jobs import stored_uploads
from tests.support.paths import judge
from tests.web.test_access import CI, bearer, csrf_of, job_count, keyed_app, login
from worker.cli import main
from worker.config import Settings


def package_zip(tmp_path: Path, game: str, *recipes: str) -> bytes:
    """The zip ``dealer package GAME --zip … --recipe …`` writes."""
    path = tmp_path / "made.zip"
    result = CliRunner().invoke(main, ["package", game, "--zip", str(path),
                                       *(word for recipe in recipes for word in ("--recipe", recipe))])
    assert result.exit_code == 0, result.output
    return path.read_bytes()


def test_the_zip_is_the_one_dealer_package_writes_for_the_same_recipes(client: Any, settings: Settings,
                                                                      tmp_path: Path) -> None:
    body = {"game": "mahjong", "recipes": [{"cases": 12, "seed": 4, "layout": "sorted"},
                                           {"cases": 8, "seed": 5, "mix": "ready=1,not-ready=1", "honours": False}]}
    response = client.post("/api/package", json=body)
    assert response.status_code == 200 and response.mimetype == "application/zip"
    assert response.headers["Content-Disposition"] == 'attachment; filename="mahjong.zip"'
    assert response.data == package_zip(tmp_path, "mahjong", "--cases 12 --seed 4 --layout sorted",
                                        "--cases 8 --seed 5 --mix ready=1,not-ready=1 --no-honours")
    assert stored_uploads(settings) == [] and job_count(settings) == 0


def test_without_recipes_the_package_is_the_default_one(client: Any, tmp_path: Path) -> None:
    response = client.post("/api/package", json={"game": "10-20-30"})
    assert response.status_code == 200 and response.data == package_zip(tmp_path, "10-20-30")
    assert 'filename="tentwentythirty.zip"' in response.headers["Content-Disposition"]


def test_the_license_and_rights_owner_asked_are_the_ones_dealer_package_writes(client: Any, tmp_path: Path) -> None:
    response = client.post("/api/package", json={"game": "accordion", "license": "cc by-sa", "rights_owner": "Ada's course"})
    assert response.status_code == 200
    made = tmp_path / "made.zip"
    result = CliRunner().invoke(main, ["package", "accordion", "--zip", str(made), "--license", "cc by-sa",
                                       "--rights-owner", "Ada's course"])
    assert result.exit_code == 0, result.output
    assert response.data == made.read_bytes()
    yaml = zipfile.ZipFile(io.BytesIO(response.data)).read("problem.yaml").decode()
    assert 'license: cc by-sa\nrights_owner: "Ada\'s course"\n' in yaml


@pytest.mark.parametrize(("body", "message"), [
    ({"game": "chess"}, "game: must be one of 10-20-30, accordion, mahjong, not 'chess'"),
    ({"game": "accordion", "colour": "red"}, "colour: no such field (game, recipes, license, rights_owner)"),
    ({"game": "accordion", "license": "gpl"},
     'license: "gpl" is none of the format\'s: cc by, cc by-sa, cc0, public domain, educational, permission, unknown'),
    ({"game": "accordion", "license": 3}, "license: must be a string"),
    ({"game": "accordion", "license": "public domain", "rights_owner": "Ada"},
     "rights_owner: a package under 'public domain' names none"),
    ({"game": "accordion", "rights_owner": "two\nlines"}, "rights_owner: one line of 1 to 200 printable characters"),
    ({"game": "accordion", "recipes": {"cases": 3}}, "recipes: must be a list of at most 8 recipes"),
    ({"game": "accordion", "recipes": [3]}, 'recipes[0]: must be an object, e.g. {"cases": 100}'),
    ({"game": "accordion", "recipes": [{"cases": 3, "game": "mahjong"}]},
     "recipes[0].game: the package's game is given once, beside the recipes"),
    ({"game": "accordion", "recipes": [{"cases": 3}, {"cases": "3"}]}, "recipes[1].cases: must be a whole number, not '3'"),
    ({"game": "accordion", "recipes": [{"cases": 3, "mix": "draw=1"}]},
     'recipes[0].mix: accordion has no outcome "draw" (expected win, loss, or piles left as N, A-B or A+)'),
    ({"game": "accordion", "recipes": [{"cases": 3, "honours": False}]},
     "recipes[0].honours: only mahjong hands have honours to leave out, not accordion's"),
    ({"game": "accordion", "recipes": [{"cases": 1500}, {"cases": 501}]},
     "recipes: a package made here holds at most 2,000 cases in all; dealer package makes larger ones"),
])
def test_what_cannot_be_made_is_a_400_naming_the_field(client: Any, body: dict[str, Any], message: str) -> None:
    response = client.post("/api/package", json=body)
    assert (response.status_code, response.get_json()) == (400, {"error": message})


def test_with_keys_a_package_needs_a_key(settings: Settings, dispatcher: Any) -> None:
    client = keyed_app(settings, dispatcher).test_client()
    assert client.post("/api/package", json={"game": "accordion"}).status_code == 401
    assert client.post("/api/package", json={"game": "accordion"}, headers=bearer(CI)).status_code == 200


# --- the Generate form's "Download a problem package" ----------------------------------------


def test_the_form_downloads_the_package_of_its_file(client: Any, tmp_path: Path) -> None:
    page = client.get("/upload").get_data(as_text=True)
    assert 'formaction="/generate/package"' in page
    response = client.post("/generate/package", data={"game": "accordion", "cases": "6", "seed": "2",
                                                      "mix": "1=1,6+=1", "layout": ""})
    assert response.status_code == 200 and response.mimetype == "application/zip"
    assert response.data == package_zip(tmp_path, "accordion", "--cases 6 --seed 2 --mix 1=1,6+=1")
    with zipfile.ZipFile(io.BytesIO(response.data)) as opened:
        assert opened.read("data/secret/02.desc").startswith(b"dealer generate accordion --cases 6 --seed 2")


def test_the_form_says_what_cannot_be_packaged_and_keeps_what_was_typed(client: Any) -> None:
    response = client.post("/generate/package", data={"game": "mahjong", "cases": "12", "mix": "ready=1,bingo=2"})
    assert response.status_code == 400
    page = response.get_data(as_text=True)
    assert "mix: mahjong has no outcome &#34;bingo&#34;" in page and 'value="ready=1,bingo=2"' in page
    response = client.post("/generate/package", data={"game": "mahjong", "cases": "2001"})
    assert response.status_code == 400 and "cases must be at most 2,000, not 2001" in response.get_data(as_text=True)


def test_with_keys_the_form_needs_a_login_and_its_csrf_token(settings: Settings, dispatcher: Any) -> None:
    client = keyed_app(settings, dispatcher).test_client()
    form = {"game": "accordion", "cases": "4"}
    assert client.post("/generate/package", data=form).status_code == 401
    assert login(client, CI).status_code == 303
    token = csrf_of(client.get("/upload").get_data(as_text=True))
    assert client.post("/generate/package", data={**form, "csrf_token": token}).status_code == 200


def test_a_generated_jobs_page_offers_its_file_as_a_package(client: Any, tmp_path: Path) -> None:
    body = {"game": "mahjong", "cases": 9, "seed": 3, "mix": "ready=2,not-ready=1", "layout": "sorted",
            "honours": False}
    job = client.post("/api/generate", json=body).get_json()
    page = client.get(f"/jobs/{job['id']}").get_data(as_text=True)
    form = re.search(r'<form class="inline-form" id="package-form" method="post" action="/generate/package">(.*?)</form>',
                     page, re.DOTALL)
    assert form is not None
    fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', form[1]))
    assert fields == {"game": "mahjong", "cases": "9", "seed": "3", "mix": "ready=2,not-ready=1", "layout": "sorted",
                      "no_honours": "on"}
    response = client.post("/generate/package", data=fields)
    assert response.data == package_zip(tmp_path, "mahjong",
                                        "--cases 9 --seed 3 --mix ready=2,not-ready=1 --layout sorted --no-honours")


def test_the_page_of_an_uploaded_job_or_a_large_generated_one_offers_no_package(client: Any) -> None:
    uploaded = post_file(client, judge("accordion", "sample"), "accordion", "generated-accordion-1-seed-1.in.txt")
    large = client.post("/api/generate", json={"game": "accordion", "cases": 2001, "seed": 1}).get_json()
    for job in (uploaded.get_json(), large):
        assert 'id="package-form"' not in client.get(f"/jobs/{job['id']}").get_data(as_text=True)
