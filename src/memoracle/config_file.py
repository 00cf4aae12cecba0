"""The config file's text: `init`'s file with every key commented at its default
(`render_toml`), one key set in place keeping every other line (`set_key`), and a value
in TOML (`toml_value`). Settings themselves, and how they are read: `config`."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from memoracle.config import Settings
from memoracle.files import write_atomically


def render_toml(settings: Settings) -> str:
    """The full config file text with every key commented at its default, for `init`."""
    lines = [
        "# memoracle configuration. Every key is optional; the defaults are shown commented.",
        "# Override any key with MEMORACLE_<SECTION>_<KEY>, e.g. MEMORACLE_RECALL_BUDGET_TOKENS.",
    ]
    current = ""
    for key, value, _source, help in settings.items():
        section, name = key.split(".")
        if section != current:
            lines += ["", f"[{section}]"]
            current = section
        lines.append(f"# {help}")
        lines.append(f"# {name} = {toml_value(value)}")
    return "\n".join(lines) + "\n"


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "inf" if math.isinf(value) else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    return repr(value)


def set_key(path: Path, section: str, key: str, value: str) -> None:
    """Set `section.key` in a config file, keeping every other line (and comment) as is."""
    lines = path.read_text(encoding="utf-8").splitlines()
    header = f"[{section}]"
    setting = f"{key} = {toml_value(value)}"
    if header not in lines:
        lines += ["", header, setting]
    else:
        start = lines.index(header) + 1
        end = next((i for i in range(start, len(lines)) if lines[i].startswith("[")), len(lines))
        for i in range(start, end):
            if lines[i].split("=")[0].strip() == key:
                lines[i] = setting
                break
        else:
            lines.insert(start, setting)
    write_atomically(path, "\n".join(lines) + "\n")
