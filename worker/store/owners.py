"""Who sees and manages which rows: the one rule of visibility, as SQL conditions on an ``owner`` column.

Every job, upload and check carries the name of the API key that made it (``owner``;
``None`` for what was made in open mode). A :class:`Viewer` is who asks: the web app makes one
per request from its key and role (:mod:`webui.auth`), and the queries and services of the
floors above apply its conditions in their SQL, so that a row another viewer may not see is
never read at all (it is "not found", the same answer as an id that does not exist).

- an admin (and everyone in open mode, before a first key is made) sees and manages everything;
- a user sees and manages what it made; with public reads (``DEALER_PUBLIC_READS``) it, and a
  visitor without a key, also sees everything else, but manages nothing of another's;
- a visitor without a key sees nothing when reads are not public;
- a job its owner shared (``jobs.shared``) is also seen by every user with a key, for what a class
  needs of a teacher's judge file and no more: the job's figures and its input, and checks of their
  own made against it (:meth:`Viewer.reads_shared`, :meth:`Viewer.checks`); its answers (output,
  cases, traces, exports) stay under :meth:`Viewer.reads`, and a check shows the judge's lines to
  whoever does not read the job only when the owner revealed them (:meth:`Viewer.sees_answers`).

>>> from sqlalchemy import column
>>> owner = column("owner")
>>> alice = Viewer.user("alice", public=False)
>>> str(alice.reads(owner)), alice.may_read("alice"), alice.may_read("bob"), alice.may_read(None)
('owner = :owner_1', True, False, False)
>>> str(Viewer.user("alice", public=True).reads(owner)), Viewer.user("alice", public=True).may_manage("bob")
('true', False)
>>> str(Viewer.anonymous(public=False).reads(owner)), str(EVERYTHING.manages(owner))
('false', 'true')
>>> shared = column("shared")
>>> str(alice.reads_shared(owner, shared)), str(Viewer.anonymous(public=False).reads_shared(owner, shared))
('owner = :owner_1 OR shared IS true', 'false')
>>> alice.may_check("bob", shared=True), alice.may_check("bob", shared=False), alice.sees_answers("bob", False)
(True, False, False)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, false, or_, true


@dataclass(frozen=True)
class Viewer:
    #: The key's name: the owner of what this viewer makes; ``None`` without a key (or in open mode).
    name: str | None
    #: Sees and manages everything (an admin key; everyone in open mode).
    admin: bool = False
    #: Reads everything, manages only its own (``DEALER_PUBLIC_READS`` with keys).
    public: bool = False

    @classmethod
    def user(cls, name: str, public: bool) -> Viewer:
        return cls(name, admin=False, public=public)

    @classmethod
    def administrator(cls, name: str) -> Viewer:
        return cls(name, admin=True, public=True)

    @classmethod
    def anonymous(cls, public: bool) -> Viewer:
        return cls(None, admin=False, public=public)

    @property
    def sees_all(self) -> bool:
        """Whether it sees every row: figures of the whole service (the broker's queue) are then its to see."""
        return self.admin or self.public

    def reads(self, owner: Any) -> ColumnElement[bool]:
        """The condition on an ``owner`` column under which this viewer may see a row."""
        return true() if self.admin or self.public else self._own(owner)

    def manages(self, owner: Any) -> ColumnElement[bool]:
        """The condition on an ``owner`` column under which this viewer may change or delete a row."""
        return true() if self.admin else self._own(owner)

    def reads_shared(self, owner: Any, shared: Any) -> ColumnElement[bool]:
        """The condition under which this viewer may see a job's figures and input and check an output against
        it: :meth:`reads`, or a job shared with every user (``shared``, its column) for a viewer with a key."""
        if self.admin or self.public:
            return true()
        return false() if self.name is None else or_(self._own(owner), shared.is_(True))

    def checks(self, check_owner: Any, job_owner: Any, shared: Any) -> ColumnElement[bool]:
        """The condition under which this viewer may see a check: whoever reads its job sees its every
        check; a user with a key sees its own checks of a shared job."""
        mine = false() if self.name is None else check_owner == self.name
        return or_(self.reads(job_owner), shared.is_(True) & mine)

    def _own(self, owner: Any) -> ColumnElement[bool]:
        return false() if self.name is None else owner == self.name

    def may_read(self, owner: str | None) -> bool:
        """:meth:`reads` for a row already read (its owner given)."""
        return self.admin or self.public or self._owns(owner)

    def may_manage(self, owner: str | None) -> bool:
        """:meth:`manages` for a row already read."""
        return self.admin or self._owns(owner)

    def may_check(self, owner: str | None, shared: bool) -> bool:
        """Whether it may check an output against a job (owned by ``owner``, shared or not): one it manages,
        or one shared with every user, for a viewer with a key."""
        return self.may_manage(owner) or (shared and self.name is not None)

    def sees_answers(self, owner: str | None, revealed: bool) -> bool:
        """Whether a check against a job (owned by ``owner``) shows it the judge's lines: when it reads the
        job's answers, or the owner revealed them (``jobs.reveal_answers``)."""
        return revealed or self.may_read(owner)

    def _owns(self, owner: str | None) -> bool:
        return self.name is not None and owner == self.name


#: Whoever runs the service itself (the command line, the workers, open mode): sees and manages all.
EVERYTHING = Viewer(None, admin=True, public=True)
