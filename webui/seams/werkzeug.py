"""Werkzeug's form parsing and Flask's request, opened where they offer no hook: an uploaded file's
stream is made knowing the form field it is sent in (Werkzeug's stream factory is told only its name
and type), and a body cut short is answered as the app says (Werkzeug's own: ``400``).

Written against Werkzeug 3.1 (``formparser.FormDataParser._parse_multipart``, which makes its
``MultiPartParser`` there and nowhere else; ``MultiPartParser.start_file_streaming``, called as each
file's part starts) and Flask 3.1 (``Request._load_form_data``, where the body is parsed).
"""

from __future__ import annotations

from typing import IO, Any, Protocol

from flask import Request
from werkzeug.exceptions import ClientDisconnected, HTTPException
from werkzeug.formparser import FormDataParser, MultiPartParser
from werkzeug.sansio.multipart import File

#: The bounds pyproject.toml sets on what this module reaches into (tests/test_seams.py holds them equal).
WRITTEN_AGAINST = ("werkzeug>=3.1,<3.2", "flask>=3.1,<3.2")


class OpenFile(Protocol):
    def __call__(self, field: str, filename: str | None, total_content_length: int | None) -> IO[bytes]: ...


class _FieldsParser(MultiPartParser):
    """Werkzeug's multipart parser, each file's stream opened knowing its field."""

    def __init__(self, open_file: OpenFile, **options: Any) -> None:
        super().__init__(**options)
        self.open_file = open_file

    def start_file_streaming(self, event: File, total_content_length: int | None) -> IO[bytes]:
        return self.open_file(event.name, event.filename, total_content_length)


class _FormParser(FormDataParser):
    """Werkzeug's form parser, with the multipart parser above."""

    open_file: OpenFile

    def _parse_multipart(self, stream: IO[bytes], mimetype: str, content_length: int | None,
                         options: dict[str, str]) -> Any:
        # Werkzeug's own, but for the parser it makes.
        parser = _FieldsParser(self.open_file, stream_factory=self.stream_factory,
                               max_form_memory_size=self.max_form_memory_size,
                               max_form_parts=self.max_form_parts, cls=self.cls)
        boundary = options.get("boundary", "").encode("ascii")
        if not boundary:
            raise ValueError("Missing boundary")
        form, files = parser.parse(stream, boundary, content_length)
        return stream, form, files


class FileFieldsRequest(Request):
    """Flask's request whose uploaded files are each written to what :meth:`open_file` gives, told the form
    field it is sent in before any of it arrives, and whose body cut short is answered as :meth:`cut_short`
    says."""

    form_data_parser_class = _FormParser

    def open_file(self, field: str, filename: str | None, total_content_length: int | None) -> IO[bytes]:
        """The stream the file sent in ``field`` is written to; Werkzeug's own (memory, or a temporary
        file past 500 KB)."""
        return self._get_file_stream(total_content_length, None, filename)

    def cut_short(self) -> HTTPException | None:
        """The error a body that ends short is answered with; None for Werkzeug's own (``400``)."""
        return None

    def make_form_data_parser(self) -> FormDataParser:
        parser = super().make_form_data_parser()
        if isinstance(parser, _FormParser):
            parser.open_file = self.open_file
        return parser

    def _load_form_data(self) -> None:
        try:
            super()._load_form_data()
        except ClientDisconnected:
            error = self.cut_short()
            if error is not None:
                raise error from None
            raise
