"""The one parser of the ``KIND:KEY=VALUE,...`` strings users type (``--mech``, ``--accuracy``, ``--strategy``,
``--pattern``): a key given twice is refused wherever it is typed (issue 32, item 9)."""

from __future__ import annotations


def parse_key_values(text: str, what: str, *, kind: bool = True) -> tuple[str, dict[str, str]]:
    """The one parser of the ``KIND:KEY=VALUE,...`` strings users type (``--mech``, ``--strategy``,
    ``--pattern``, ``--accuracy``): ``(kind, {key: value})``, keys and values stripped, values left as text
    for the caller to convert. Empty parts (a trailing comma) are skipped.

    Args:
        text: the string as typed.
        what: how the string is named in messages (``"--mech"``, ``"strategy"``).
        kind: whether the string starts with ``KIND:`` (without it, the whole string is the pairs and
            the kind returned is ``""``).

    Raises:
        ValueError: a part that is not ``KEY=VALUE``, or a key given twice (never the last one silently:
            ``tree:n=2000,n=3`` is ambiguous).
    """
    name, _, rest = text.partition(":") if kind else ("", "", text)
    fields: dict[str, str] = {}
    for part in rest.split(","):
        if not part.strip():
            continue
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or not key:
            raise ValueError(f"{what} parameters must be KEY=VALUE, got {part!r} in {text!r}")
        if key in fields:
            raise ValueError(f"{what} parameter {key!r} is given twice in {text!r}; give it once")
        fields[key] = value.strip()
    return name.strip(), fields
