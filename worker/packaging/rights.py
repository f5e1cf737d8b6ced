"""Who owns a package and on what terms: ``problem.yaml``'s ``license`` and ``rights_owner``.

Light on purpose: the command line's options list the licenses before any package is made.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from worker.packaging.errors import PackageError

#: The licenses the format names (its legacy version's ``license`` field).
LICENSES = ("cc by", "cc by-sa", "cc0", "public domain", "educational", "permission", "unknown")
#: Licenses under which the package names no rights owner (the format forbids one for the public domain).
_OWNERLESS = ("public domain", "unknown")


@dataclass(frozen=True)
class Rights:
    """Who owns the package and on what terms, as ``problem.yaml`` says it.

    The default is the format's closest to the project's own MIT license: the statement and the
    programs are Dealer's, and a course or contest may publish the problem with credit.

    >>> Rights().yaml()
    'license: cc by\\nrights_owner: "the Dealer authors"\\n'
    >>> Rights("public domain", None).yaml()
    'license: public domain\\n'
    >>> Rights("gpl")
    Traceback (most recent call last):
    ...
    worker.packaging.errors.PackageError: license: "gpl" is none of the format's: cc by, cc by-sa, cc0, public domain, educational, permission, unknown
    """

    license: str = "cc by"
    owner: str | None = "the Dealer authors"

    def __post_init__(self) -> None:
        if self.license not in LICENSES:
            raise PackageError(f"license: {json.dumps(self.license)[:60]} is none of the format's: {', '.join(LICENSES)}")
        if self.owner is not None:
            if self.license in _OWNERLESS:
                raise PackageError(f"rights owner: a package under {self.license!r} names none")
            if not self.owner.strip() or len(self.owner) > 200 or not self.owner.isprintable():
                raise PackageError("rights owner: one line of 1 to 200 printable characters")

    @classmethod
    def asked(cls, license: str | None = None, owner: str | None = None) -> Rights:
        """The rights a setter asked for, each left out taking its default (no owner where the license
        names none).

        >>> Rights.asked("cc0", "Ada's course")
        Rights(license='cc0', owner="Ada's course")
        >>> Rights.asked("public domain")
        Rights(license='public domain', owner=None)
        """
        license = cls.license if license is None else license
        if owner is None and license not in _OWNERLESS:
            owner = cls.owner
        return cls(license, owner)

    def yaml(self) -> str:
        owner = "" if self.owner is None else f"rights_owner: {json.dumps(self.owner, ensure_ascii=False)}\n"
        return f"license: {self.license}\n{owner}"
