"""The one user-facing error type: its message is written to be shown as is."""


class RRError(ValueError):
    """Bad input or an unusable setting; the message says what is wrong and what is allowed."""


class Stopped(RRError):
    """A run stopped before it finished: its time limit passed, its client left, or Stop."""

    def __init__(self, message: str = "the run was stopped before it finished") -> None:
        super().__init__(message)


def check_stop(stop) -> None:
    """Raise `Stopped` when the flag `stop` (a `threading.Event`, or None: never) is set; the
    engine calls it between decoding steps and turns."""
    if stop is not None and stop.is_set():
        raise Stopped()
