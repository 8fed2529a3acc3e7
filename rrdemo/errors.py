"""The one user-facing error type: its message is written to be shown as is."""


class RRError(ValueError):
    """Bad input or an unusable setting; the message says what is wrong and what is allowed."""
