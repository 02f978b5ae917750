"""The two markers the settings use besides ``None``: chosen on train, and not given.

:data:`TUNED` is a default meaning "chosen on the training split"; :data:`NOT_GIVEN` is what an
override holds when the user left the option out. Each is one object, compared by identity, and
stays itself when pickled or copied.
"""

from __future__ import annotations

from typing import Final

__all__ = ["NOT_GIVEN", "TUNED", "Sentinel"]


class Sentinel:
    """A named marker that is never equal to a real value (nor to None)."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name

    def __reduce__(self) -> str:
        # Pickled and copied as the module attribute itself, so identity checks keep working.
        return self._name


#: The default of a setting chosen on the training split (resolved once per run).
TUNED: Final = Sentinel("TUNED")
#: What an override holds when the user did not give the option.
NOT_GIVEN: Final = Sentinel("NOT_GIVEN")
