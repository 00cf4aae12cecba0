"""Data bundled with memoracle: the demo session, and the weights of the learned
decisions with their metadata (`weights`)."""

from __future__ import annotations

import json
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy.typing as npt


def weights(meta: str, arrays: str) -> tuple[dict[str, Any], dict[str, npt.NDArray[Any]]]:
    """The shipped metadata (JSON file `meta`) and arrays (``.npz`` file `arrays`) of one
    learned decision, each array read whole."""
    import numpy as np  # here: the package is opened for the demo session too

    folder = resources.files(__package__)
    data = json.loads(folder.joinpath(meta).read_text(encoding="utf-8"))
    with folder.joinpath(arrays).open("rb") as raw, np.load(raw) as loaded:
        return data, {name: loaded[name] for name in loaded.files}
