"""License names a user may type, mapped to scirag's license classes (issue 25).

scirag files every document under one of five classes (LICENSES: the values the
database's scirag.license_class domain allows). People write licenses as they know
them: "CC-BY", "cc0", "Open_Commercial". Class names are matched case-insensitively;
the common Creative Commons names map to the class whose terms they grant, and the
caller is told which class was taken. A license whose terms no class matches exactly
(no-derivatives) is refused with the choice spelled out.
"""

from __future__ import annotations

import re

LICENSES = ("public", "open_commercial", "open_noncommercial", "restricted", "unknown")

# Creative Commons names (any case, "-", "_" or " " between parts, optional version).
COMMON = {
    "cc0": "public",
    "public-domain": "public",
    "pd": "public",
    "cc-by": "open_commercial",
    "cc-by-sa": "open_commercial",
    "cc-by-nc": "open_noncommercial",
    "cc-by-nc-sa": "open_noncommercial",
}
UNDECIDED = {
    "cc-by-nd": "commercial use of verbatim copies only",
    "cc-by-nc-nd": "non-commercial use of verbatim copies only",
}


def _key(name: str) -> str:
    key = re.sub(r"[\s_]+", "-", name.strip().lower())
    return re.sub(r"-\d+(\.\d+)?$", "", key)  # CC-BY-4.0 -> cc-by (CC0 keeps its 0)


def normalise_license(name: str, what: str = "license") -> tuple[str, str | None]:
    """(class, hint): the license class a name stands for and, when the name was not a
    class name, a one-line hint saying which class it was taken as. Raises ValueError
    with the classes and the common names for anything else."""
    lowered = name.strip().lower()
    if lowered in LICENSES:
        return lowered, None
    key = _key(name)
    if key in COMMON:
        return COMMON[key], f"hint: {what} {name!r} taken as {COMMON[key]}"
    if key in UNDECIDED:
        raise ValueError(
            f"{what} {name!r} allows {UNDECIDED[key]}: no license class matches it exactly; state the class "
            "your use fits: open_commercial, open_noncommercial or restricted"
        )
    raise ValueError(
        f"{what} {name!r} is not one of {', '.join(LICENSES)} "
        "(common names are accepted too: CC0, CC-BY, CC-BY-SA, CC-BY-NC, CC-BY-NC-SA)"
    )
