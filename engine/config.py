"""Settings (every default from the spec), TOML loading, environment overrides and the clock.

One frozen ``Settings`` value describes a run. It is built once by :func:`load_settings`
from, in increasing priority: the spec's defaults, ``<home>/config.toml``, environment
variables (``CLAWMEM_*``) and explicit overrides (command-line flags).
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from clawmem.engine.errors import ConfigError
from clawmem.engine.kinds import SCORING_MODES, ScoringMode

# --------------------------------------------------------------------------- sections


@dataclass(frozen=True)
class IndexSettings:
    chunk_tokens: int = 400
    chunk_overlap: int = 80
    watch_debounce_ms: int = 1500
    max_file_bytes: int = 5 * 1024 * 1024
    fts_tokenizer: str = "trigram"  # "trigram" (finds CJK) or "unicode61"
    extra_paths: tuple[str, ...] = ()
    sources: tuple[str, ...] = ("memory",)


@dataclass(frozen=True)
class EmbeddingSettings:
    # "auto": the bundled multilingual model; any failure falls back to keyword-only.
    # "none": keyword-only by choice.  A configured ``model`` path is *required*:
    # when it cannot load, search and sync fail instead of silently degrading.
    provider: str = "auto"
    model: str | None = None
    threads: int | None = None  # None: leave a core free on small machines (the search path)
    # An indexing pass's threads: None ("auto") takes every core other processes leave free,
    # re-measured per model call (engine/index/thread_budget.py); a number fixes it.
    index_threads: int | None = None
    prefix_scheme: str | None = None  # None: the model's own default
    cache_max_entries: int = 50_000
    batch_size: int = 16
    # A vector per content line of each multi-line chunk, for calibrated search's best-line
    # evidence (engine/index/line_evidence.py). Off: no line pass (it costs about as much model
    # time as the chunk pass on diaries) and search scores chunks by their own vector alone.
    line_vectors: bool = True


@dataclass(frozen=True)
class SearchSettings:
    max_results: int = 6
    min_score: float = 0.35
    vector_weight: float = 0.7
    text_weight: float = 0.3
    candidate_multiplier: int = 4
    mmr_enabled: bool = True
    mmr_lambda: float = 0.7
    decay_enabled: bool = True
    half_life_days: float = 30.0
    # Default scoring: the most age can take off a qualifying memory's ranking score (0 = age never
    # reorders, 1 = the spec's plain multiplier, which can bury an old answer under any newer one).
    max_decay: float = 0.3
    # Default scoring: when two qualifying daily notes are versions of one fact, the newer ranks
    # directly above the older, which says so (engine/search/versions.py). Markers a person wrote
    # (status: superseded) are honoured either way.
    newer_version_first: bool = True
    snippet_max_chars: int = 700
    scoring: ScoringMode = "calibrated"  # clawmem's calibrated vectors, or the spec's raw formula


@dataclass(frozen=True)
class BootstrapSettings:
    max_chars: int = 20_000
    total_max_chars: int = 60_000
    user_max_chars: int = 4_000
    daily_memory_days: int = 2


@dataclass(frozen=True)
class DreamingSettings:
    enabled: bool = True
    review: str = "manual"  # "manual" (review queue) or "auto" (apply like OpenClaw)
    schedule: str = "0 3 * * *"
    light_lookback_days: int = 2
    light_limit: int = 100
    light_dedupe: float = 0.9
    rem_lookback_days: int = 7
    rem_limit: int = 10
    rem_min_pattern_strength: float = 0.75
    deep_limit: int = 10
    deep_min_score: float = 0.75
    deep_min_recall_count: int = 3
    deep_min_unique_queries: int = 3
    deep_recency_half_life_days: float = 14.0
    deep_max_age_days: float = 30.0
    max_promoted_snippet_tokens: int = 160
    max_prior_entry_loss_fraction: float = 0.25
    memory_file_max_chars: int = 10_000
    preimages_keep: int = 8
    timezone: str | None = None  # IANA zone for Dreaming's days and `dream --at`; None = the user's zone


@dataclass(frozen=True)
class IntentSettings:
    cooldown_hours: float = 24.0
    max_fires: int = 3
    expiry_days: int = 90
    max_injected: int = 3
    max_injected_chars: int = 1_200


@dataclass(frozen=True)
class SessionSettings:
    # Channels where the person speaking is the owner; anywhere else a user turn is untrusted.
    trusted_channels: tuple[str, ...] = ("cli", "tui", "direct", "dm", "private", "webchat")


@dataclass(frozen=True)
class TuiSettings:
    keymap: Mapping[str, str] = field(default_factory=dict)  # binding id -> keys, e.g. "editor.save" = "ctrl+w"
    theme: str = "textual-dark"
    show_timings: bool = True  # search times in the Search pane (off for reproducible screenshots)
    cursor_blink: bool = True
    watch: bool = True  # reload files edited elsewhere


@dataclass(frozen=True)
class StoreSettings:
    # Where the derived index (chunks, full text, vectors, line vectors, the embedding cache) is
    # shared: None keeps it in this machine's SQLite only; "postgresql://user@host/db" also
    # publishes it there after every sync and searches it there, so several machines and
    # processes share one memory (engine/store/postgres/), with the recall signals searches make
    # (engine/recall_sharing.py). Sessions, intents and Dreaming state stay in each machine's SQLite.
    url: str | None = None
    schema: str = "clawmem"  # the PostgreSQL schema that is this index (one per workspace)


@dataclass(frozen=True)
class Settings:
    home: Path
    workspace: Path
    agent_id: str = "main"
    timezone: str | None = None  # IANA name; None = the machine's local zone
    index: IndexSettings = field(default_factory=IndexSettings)
    embedding: EmbeddingSettings = field(default_factory=EmbeddingSettings)
    search: SearchSettings = field(default_factory=SearchSettings)
    bootstrap: BootstrapSettings = field(default_factory=BootstrapSettings)
    dreaming: DreamingSettings = field(default_factory=DreamingSettings)
    intents: IntentSettings = field(default_factory=IntentSettings)
    sessions: SessionSettings = field(default_factory=SessionSettings)
    tui: TuiSettings = field(default_factory=TuiSettings)
    store: StoreSettings = field(default_factory=StoreSettings)
    now: str | None = None  # fixed clock (ISO 8601), from CLAWMEM_NOW
    models_path: Path | None = None  # shared model cache (CLAWMEM_MODELS_DIR); default <home>/models

    @property
    def agent_dir(self) -> Path:
        return self.home / "agents" / self.agent_id / "agent"

    @property
    def db_path(self) -> Path:
        return self.agent_dir / "clawmem-agent.sqlite"

    @property
    def models_dir(self) -> Path:
        return self.models_path or self.home / "models"

    @property
    def config_path(self) -> Path:
        return self.home / "config.toml"

    def tz(self) -> tzinfo:
        """The user's time zone (dreaming days, 'today' for diaries, intent dates)."""
        if self.timezone:
            try:
                return ZoneInfo(self.timezone)
            except (ZoneInfoNotFoundError, ValueError) as exc:
                raise ConfigError(f"unknown time zone {self.timezone!r}") from exc
        local = datetime.now().astimezone().tzinfo
        return local if local is not None else UTC

    def clock(self) -> Clock:
        return Clock(fixed=parse_instant(self.now) if self.now else None, tz=self.tz())


# --------------------------------------------------------------------------- clock


@dataclass(frozen=True)
class Clock:
    """The only source of 'now' in the engine, so tests and snapshots are deterministic."""

    fixed: datetime | None = None
    tz: tzinfo = UTC

    def now(self) -> datetime:
        """Timezone-aware current instant (UTC)."""
        return self.fixed if self.fixed is not None else datetime.now(UTC)

    def local_now(self) -> datetime:
        return self.now().astimezone(self.tz)

    def today(self) -> str:
        """The user's local date, ``YYYY-MM-DD``."""
        return self.local_now().date().isoformat()

    def timestamp(self) -> float:
        return self.now().timestamp()


def parse_instant(text: str) -> datetime:
    """Parse an ISO 8601 instant; a naive value is taken as UTC."""
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError as exc:
        raise ConfigError(f"not an ISO 8601 date-time: {text!r}") from exc
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError as exc:  # e.g. 0001-01-01T00:00:00+01:00 is before year 1 in UTC
        raise ConfigError(f"not an ISO 8601 date-time in range: {text!r}") from exc


# --------------------------------------------------------------------------- loading

# config.toml's tables and the settings each fills (the config fuzzer draws its keys from here)
SECTIONS: dict[str, type] = {
    "index": IndexSettings,
    "embedding": EmbeddingSettings,
    "search": SearchSettings,
    "bootstrap": BootstrapSettings,
    "dreaming": DreamingSettings,
    "intents": IntentSettings,
    "sessions": SessionSettings,
    "tui": TuiSettings,
    "store": StoreSettings,
}

_CHOICES: dict[tuple[str, str], tuple[str, ...]] = {
    ("index", "fts_tokenizer"): ("trigram", "unicode61"),
    ("embedding", "provider"): ("auto", "none", "local"),
    ("embedding", "prefix_scheme"): ("e5", "e5-symmetric", "none"),
    ("search", "scoring"): SCORING_MODES,
    ("dreaming", "review"): ("manual", "auto"),
}


def default_home() -> Path:
    env = os.environ.get("CLAWMEM_HOME")
    return Path(env).expanduser() if env else Path.home() / ".clawmem"


def _coerce(section: str, name: str, declared: Any, value: Any) -> Any:
    where = f"{section}.{name}" if section else name
    declared_s = str(declared)
    if isinstance(value, bool) and "bool" not in declared_s:
        raise ConfigError(f"config {where}: expected {declared_s}, got a boolean")
    if "tuple" in declared_s:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"config {where}: expected a list of strings")
        return tuple(value)
    if "Mapping" in declared_s:
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise ConfigError(f"config {where}: expected a table of strings")
        return dict(value)
    if declared_s.startswith("bool"):
        if not isinstance(value, bool):
            raise ConfigError(f"config {where}: expected true or false")
        return value
    if (section, name) == ("embedding", "index_threads") and value == "auto":
        return None
    if declared_s.startswith("int"):
        if not isinstance(value, int):
            if (section, name) == ("embedding", "index_threads"):
                raise ConfigError(f'config {where}: expected "auto" or an integer')
            raise ConfigError(f"config {where}: expected an integer")
        return value
    if declared_s.startswith("float"):
        if not isinstance(value, (int, float)):
            raise ConfigError(f"config {where}: expected a number")
        if isinstance(value, int) and abs(value) > sys.float_info.max:
            raise ConfigError(f"config {where}: {value} is out of range")
        if math.isnan(value):  # nan would pass every range check
            raise ConfigError(f"config {where}: expected a number, got nan")
        return float(value)
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"config {where}: expected a string")
    choices = _CHOICES.get((section, name))
    if choices and value is not None and value not in choices:
        raise ConfigError(f"config {where}: {value!r} is not one of {', '.join(choices)}")
    return value


def _apply_section(obj: Any, section: str, table: Mapping[str, Any]) -> Any:
    known = {f.name: f for f in fields(obj)}
    changes: dict[str, Any] = {}
    for key, value in table.items():
        name = key.replace("-", "_")
        if name not in known:
            raise ConfigError(f"config {section}: unknown setting {key!r}")
        changes[name] = _coerce(section, name, known[name].type, value)
    return replace(obj, **changes)


def load_settings(
    *,
    home: Path | None = None,
    workspace: Path | None = None,
    agent_id: str | None = None,
    model: str | None = None,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
    read_config_file: bool = True,
) -> Settings:
    """Build the run's settings: defaults < config.toml < CLAWMEM_* env < explicit arguments.

    A bad setting's one line names the key and, when a config file was read, the file."""
    home = Path(home or default_home()).expanduser().resolve()
    try:
        return _load_settings(home, workspace, agent_id, model, overrides, read_config_file)
    except ConfigError as exc:
        config_file = home / "config.toml"
        if read_config_file and str(exc).startswith("config") and config_file.is_file():
            raise ConfigError(f"{exc} (in {config_file})") from exc
        raise


def _load_settings(
    home: Path,
    workspace: Path | None,
    agent_id: str | None,
    model: str | None,
    overrides: Mapping[str, Mapping[str, Any]] | None,
    read_config_file: bool,
) -> Settings:
    data: dict[str, Any] = {}
    config_file = home / "config.toml"
    if read_config_file and config_file.is_file():
        try:
            data = tomllib.loads(config_file.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{config_file}: {exc}") from exc
        except OSError as exc:
            raise ConfigError(f"cannot read {config_file}: {exc.strerror}") from exc

    top: dict[str, Any] = {}
    for key, value in data.items():
        if key in SECTIONS:
            if not isinstance(value, dict):
                raise ConfigError(f"config [{key}] must be a table")
            continue
        if key not in ("workspace", "agent_id", "timezone"):
            raise ConfigError(f"config: unknown setting {key!r}")
        if not isinstance(value, str):
            raise ConfigError(f"config {key}: expected a string")
        top[key] = value

    ws_text = str(workspace) if workspace is not None else os.environ.get("CLAWMEM_WORKSPACE") or top.get("workspace")
    ws = Path(ws_text).expanduser() if ws_text else home / "workspace"
    if not ws.is_absolute():
        ws = (Path.cwd() / ws) if ws_text else ws
    settings = Settings(
        home=home,
        workspace=ws.resolve(),
        agent_id=agent_id or os.environ.get("CLAWMEM_AGENT") or top.get("agent_id", "main"),
        timezone=os.environ.get("CLAWMEM_TZ") or top.get("timezone"),
        now=os.environ.get("CLAWMEM_NOW") or None,
        models_path=Path(os.environ["CLAWMEM_MODELS_DIR"]).expanduser()
        if os.environ.get("CLAWMEM_MODELS_DIR")
        else None,
    )
    if not _valid_agent_id(settings.agent_id):
        source = "--agent" if agent_id else "CLAWMEM_AGENT" if os.environ.get("CLAWMEM_AGENT") else "config agent_id"
        raise ConfigError(f"{source} {settings.agent_id!r}: use letters, digits, '-' or '_'")

    merged: dict[str, dict[str, Any]] = {k: dict(v) for k, v in data.items() if k in SECTIONS}
    env_threads = os.environ.get("CLAWMEM_THREADS")
    if env_threads:
        if not env_threads.isdigit() or int(env_threads) < 1:
            raise ConfigError(f"CLAWMEM_THREADS must be a positive integer, got {env_threads!r}")
        merged.setdefault("embedding", {})["threads"] = int(env_threads)
    env_index_threads = os.environ.get("CLAWMEM_INDEX_THREADS")
    if env_index_threads:
        if env_index_threads != "auto" and (not env_index_threads.isdigit() or int(env_index_threads) < 1):
            raise ConfigError(f'CLAWMEM_INDEX_THREADS must be "auto" or a positive integer, got {env_index_threads!r}')
        merged.setdefault("embedding", {})["index_threads"] = (
            env_index_threads if env_index_threads == "auto" else int(env_index_threads)
        )
    for env, key in (("CLAWMEM_STORE_URL", "url"), ("CLAWMEM_STORE_SCHEMA", "schema")):
        if os.environ.get(env):
            merged.setdefault("store", {})[key] = os.environ[env]
    env_model = os.environ.get("CLAWMEM_MODEL")
    if env_model:
        merged.setdefault("embedding", {})["model"] = env_model
    if model:
        merged.setdefault("embedding", {})["model"] = model
    for section, table in (overrides or {}).items():
        merged.setdefault(section, {}).update(table)

    changes: dict[str, Any] = {}
    for section, table in merged.items():
        if section not in SECTIONS:
            raise ConfigError(f"config: unknown section [{section}]")
        changes[section] = _apply_section(getattr(settings, section), section, table)
    settings = dataclasses.replace(settings, **changes)
    if settings.now:
        parse_instant(settings.now)  # validate early: a bad CLAWMEM_NOW is a user error
    settings.tz()
    _validate(settings)
    return settings


def _valid_agent_id(agent_id: str) -> bool:
    return bool(agent_id) and all(c.isalnum() or c in "-_" for c in agent_id)


# Settings that count or size something: 0 would make the feature do nothing or divide by zero.
_AT_LEAST_ONE = {
    ("index", "max_file_bytes"),
    ("embedding", "batch_size"),
    ("search", "candidate_multiplier"),
    ("search", "snippet_max_chars"),
    ("bootstrap", "max_chars"),
    ("dreaming", "memory_file_max_chars"),
}


def _validate_numbers(s: Settings) -> None:
    """Every number of every section is finite and not negative (no count, size, weight or
    duration here means anything below zero; a negative size used to skip every file silently)."""
    for section in SECTIONS:
        values = getattr(s, section)
        for f in fields(values):
            value = getattr(values, f.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            where = f"config {section}.{f.name}"
            if not math.isfinite(value) or value < 0:
                raise ConfigError(f"{where} must be a finite number, not negative (got {value})")
            if (section, f.name) in _AT_LEAST_ONE and value < 1:
                raise ConfigError(f"{where} must be at least 1 (got {value})")


def _validate(s: Settings) -> None:
    _validate_numbers(s)
    if s.index.chunk_tokens < 8:
        raise ConfigError("config index.chunk_tokens must be at least 8")
    if not 0 <= s.index.chunk_overlap < s.index.chunk_tokens:
        raise ConfigError("config index.chunk_overlap must be between 0 and chunk_tokens")
    if s.search.max_results < 1 or s.search.max_results > 200:
        raise ConfigError("config search.max_results must be between 1 and 200")
    if not 0.0 <= s.search.min_score <= 1.0:
        raise ConfigError("config search.min_score must be between 0 and 1")
    if not 0.0 <= s.search.mmr_lambda <= 1.0:
        raise ConfigError("config search.mmr_lambda must be between 0 and 1")
    if not 0.0 <= s.search.max_decay <= 1.0:
        raise ConfigError("config search.max_decay must be between 0 and 1")
    if not 0 < s.search.half_life_days < math.inf:  # inf would print as Infinity, which is not JSON
        raise ConfigError("config search.half_life_days must be positive and finite")
    if s.bootstrap.user_max_chars > 4_000:
        raise ConfigError("config bootstrap.user_max_chars cannot be raised above 4000")
    if s.embedding.threads is not None and s.embedding.threads < 1:
        raise ConfigError("config embedding.threads must be at least 1")
    if s.embedding.index_threads is not None and s.embedding.index_threads < 1:
        raise ConfigError('config embedding.index_threads must be "auto" or at least 1')
    if s.store.url is not None and not s.store.url.startswith(("postgresql://", "postgres://")):
        raise ConfigError(
            "config store.url must be a PostgreSQL URL (postgresql://user@host/db), "
            f"not {s.store.url.split(':', 1)[0]!r}"
        )
    if not _SCHEMA_NAME.match(s.store.schema):
        raise ConfigError(
            "config store.schema must be a lower-case name of letters, digits and _ (at most 63), "
            f"not {s.store.schema!r}"
        )
    if s.dreaming.preimages_keep < 1:
        raise ConfigError("config dreaming.preimages_keep must be at least 1")
    if s.dreaming.timezone is not None:
        try:
            ZoneInfo(s.dreaming.timezone)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ConfigError(
                f"config dreaming.timezone: unknown time zone {s.dreaming.timezone!r} (use an IANA name)"
            ) from exc


_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")  # as engine/store/postgres/schema.py quotes it


def default_threads() -> int:
    """Leave a core free on small machines: llama.cpp spin-waits when oversubscribed."""
    cpus = os.cpu_count() or 2
    return max(1, min(cpus - 1, 8))
