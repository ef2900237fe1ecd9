"""Where an agent's things are in an OpenClaw home: its workspace, its database and the shared
state database, each with where that answer came from.

- **Workspace:** the agent's own ``agents.list[].workspace``, else ``agents.defaults.workspace``,
  else ``<state>/workspace`` (``~`` expanded as :func:`engine.openclaw.config.expand` says).
- **Agent database:** the path the state database's ``agent_databases`` table names for the
  agent (relative to the state directory), else ``agents/<id>/agent/openclaw-agent.sqlite``.
- **State database:** ``state/openclaw.sqlite``.

A config or state database that cannot be read does not stop discovery: the defaults are used and
the reason is kept in ``notes`` (the databases themselves are described by
:mod:`engine.openclaw.databases`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from clawmem.engine.errors import ClawmemError
from clawmem.engine.openclaw import config as occ
from clawmem.engine.openclaw import databases
from clawmem.engine.store.openclaw import rows, schema

AGENT_DB = "openclaw-agent.sqlite"
STATE_DB = Path("state") / "openclaw.sqlite"


@dataclass(frozen=True)
class Discovery:
    state_dir: Path
    agent_id: str
    config_path: Path
    config: occ.OpenClawConfig | None  # None: missing or unreadable (see notes)
    workspace: Path
    workspace_from: str  # which setting named it
    agent_db: Path
    agent_db_from: str
    state_db: Path
    agents: tuple[str, ...]  # agent ids the home knows (config list and agents/ folders)
    notes: tuple[str, ...]  # what could not be read on the way, one line each


def _known_agents(state: Path, config: occ.OpenClawConfig | None) -> tuple[str, ...]:
    ids = [a.agent_id for a in config.agents] if config else []
    folder = state / "agents"
    if folder.is_dir():
        ids += sorted(p.name for p in folder.iterdir() if p.is_dir())
    return tuple(dict.fromkeys(ids))


def _workspace(state: Path, agent_id: str, config: occ.OpenClawConfig | None) -> tuple[Path, str]:
    if config is not None:
        own = next((a for a in config.agents if a.agent_id == agent_id and a.workspace), None)
        if own is not None and own.workspace:
            return occ.expand(own.workspace, state), f"agents.list[{agent_id}].workspace"
        if config.default_workspace:
            return occ.expand(config.default_workspace, state), "agents.defaults.workspace"
    return state / "workspace", "the default (<home>/workspace)"


def _agent_db(state: Path, agent_id: str, notes: list[str]) -> tuple[Path, str]:
    default = state / "agents" / agent_id / "agent" / AGENT_DB
    state_db = state / STATE_DB
    if not state_db.is_file():
        return default, "the default path"
    try:
        named = databases.read_checked(
            databases.STATE, state_db, schema.AGENT_DATABASES, "the agent database list", rows.agent_databases
        )
    except ClawmemError as exc:
        notes.append(str(exc))
        return default, "the default path"
    mine = [r for r in named if r.agent_id == agent_id]
    if not mine:
        return default, "the default path (agent_databases does not list it)"
    path = Path(mine[0].path)
    path = path if path.is_absolute() else state / path
    if not path.is_file() and default.is_file():
        notes.append(f"agent_databases names {mine[0].path} for agent {agent_id}, which does not exist here")
        return default, "the default path"
    return path, "the state database's agent_databases"


def discover(home: Path | str | None, agent_id: str = "main") -> Discovery:
    """Find the agent's workspace and databases; a one-line error only when there is no home."""
    state = occ.state_dir(home)
    notes: list[str] = []
    config_path = state / occ.CONFIG_NAME
    config: occ.OpenClawConfig | None = None
    if config_path.is_file():
        try:
            config = occ.load_config(config_path)
        except ClawmemError as exc:
            notes.append(f"{exc} (defaults used)")
    else:
        notes.append(f"{config_path} does not exist (defaults used)")
    agents = _known_agents(state, config)
    if agents and agent_id not in agents:
        raise ClawmemError(f"OpenClaw home {state} has no agent {agent_id!r} (agents: {', '.join(agents)})")
    workspace, workspace_from = _workspace(state, agent_id, config)
    agent_db, agent_db_from = _agent_db(state, agent_id, notes)
    return Discovery(
        state_dir=state,
        agent_id=agent_id,
        config_path=config_path,
        config=config,
        workspace=workspace,
        workspace_from=workspace_from,
        agent_db=agent_db,
        agent_db_from=agent_db_from,
        state_db=state / STATE_DB,
        agents=agents,
        notes=tuple(notes),
    )
