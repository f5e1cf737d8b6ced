"""What goes wrong when a package is asked for."""


class PackageError(ValueError):
    """A package that cannot be made or written where asked: the message says why."""
