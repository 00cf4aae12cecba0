"""Row-level security: the database's own wall between agents (docs/fleet.md).

Every query memoracle runs is filtered by the visibility rule (`visibility`); these
policies are a second wall for deployments that give each agent (or each agent's user)
its own database role. `agent_roles` maps a role to the agent (and, when set, the one
user) whose rows it may read and write; a role not in it sees nothing. The tables'
owner — the role that ran the migrations, memoracle's own connection — is not subject
to them (row security is enabled, not forced), so the engine works as before.

A row with no agent (the workspace's own, in a single-agent home) is seen by no agent
role: a fleet names its agents. The one function the policies call runs as its owner
(SECURITY DEFINER) with a search path an agent cannot put a table of its own ahead of
(`pg_temp` last, `agent_roles` named with its schema).
"""

from __future__ import annotations

from psycopg import sql

from memoracle.store.postgres.connection import PgDatabase

# Tables whose rows carry an agent and user of their own.
SCOPED = ("memories", "episodes", "held")
# Tables whose rows belong to a memory: visible with it.
BY_MEMORY = ("provenance", "slots", "archive", "entity_memories", "relation_memories")
# What an agent role may do on the tables it is given: append to these (never DELETE),
# and change rows of those it owns; never the audit (its triggers refuse a change
# anyway) nor a vector (one text's vector is every owner's who holds that text).
APPENDED = (*SCOPED, "provenance", "slots", "vectors", "audit")
CHANGED = (*SCOPED, "provenance", "slots")
READABLE = (*APPENDED, "archive", "entity_memories", "relation_memories", "entities", "runs")
# A row naming a turn (a held write's, a memory's provenance) hides or shows that turn in
# search: an agent may name only turns it sees.
SEEN_TURN = "(episode_id IS NULL OR EXISTS (SELECT 1 FROM episodes e WHERE e.id = episode_id))"


def m002_row_security(db: PgDatabase) -> None:
    schema = db.execute("SELECT current_schema()").fetchone()
    where = sql.Identifier(str(schema[0] if schema else "public"))
    db.execute(
        sql.SQL(
            """
CREATE TABLE agent_roles (
    role_name text PRIMARY KEY,
    agent_id  text NOT NULL,
    user_id   text
);
CREATE FUNCTION memoracle_role_sees(who name, agent text, usr text) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT EXISTS (SELECT 1 FROM {where}.agent_roles r WHERE r.role_name = who
        AND r.agent_id = agent AND (r.user_id IS NULL OR r.user_id = usr)) $$;
REVOKE ALL ON FUNCTION memoracle_role_sees(name, text, text) FROM PUBLIC;
"""
        ).format(where=where)
    )
    own = "memoracle_role_sees(current_user, agent_id, user_id)"
    for table in SCOPED:
        _policy(db, table, own, check=f"{own} AND {SEEN_TURN}" if table == "held" else None)
    mine = "EXISTS (SELECT 1 FROM memories m WHERE m.id = memory_id)"
    for table in BY_MEMORY:
        _policy(db, table, mine, check=f"{mine} AND {SEEN_TURN}" if table == "provenance" else None)
    # An agent appends entries about no memory (an import, a run) too; it reads only
    # those about memories it may see.
    about = "EXISTS (SELECT 1 FROM memories m WHERE m.id = memory_id)"
    _policy(db, "audit", about, check=f"memory_id IS NULL OR {about}")
    _policy(
        db,
        "vectors",
        "EXISTS (SELECT 1 FROM memories m WHERE m.content_hash = vectors.content_hash)"
        " OR EXISTS (SELECT 1 FROM episodes e WHERE e.content_hash = vectors.content_hash)",
    )
    _policy(
        db,
        "entities",
        "EXISTS (SELECT 1 FROM entity_memories em WHERE em.entity_id = entities.id)",
    )


def _policy(db: PgDatabase, table: str, condition: str, *, check: str | None = None) -> None:
    """Row security on `table`: rows satisfying `condition` are seen and changed, and
    rows written must satisfy `check` (`condition` by default)."""
    name = sql.Identifier(f"{table}_agent")
    db.execute(sql.SQL("ALTER TABLE {} ENABLE ROW LEVEL SECURITY").format(sql.Identifier(table)))
    db.execute(
        sql.SQL("CREATE POLICY {} ON {} USING ({}) WITH CHECK ({})").format(
            name,
            sql.Identifier(table),
            sql.SQL(condition),
            sql.SQL(check or condition),
        )
    )


def grant_agent(db: PgDatabase, role: str, *, agent: str, user: str | None = None) -> None:
    """Let the existing database `role` read and write `agent`'s rows (only `user`'s of
    them when given) and nothing else: its row in `agent_roles` and the grants. Run by
    the tables' owner; creating the role itself (CREATE ROLE … LOGIN PASSWORD …) is the
    administrator's."""
    who = sql.Identifier(role)
    with db.transaction():
        db.execute(
            "INSERT INTO agent_roles (role_name, agent_id, user_id) VALUES (%s, %s, %s)"
            " ON CONFLICT (role_name) DO UPDATE SET agent_id = EXCLUDED.agent_id,"
            " user_id = EXCLUDED.user_id",
            (role, agent, user),
        )
        db.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(_schema(db), who))
        tables = sql.SQL(", ").join(sql.Identifier(t) for t in READABLE)
        db.execute(sql.SQL("GRANT SELECT ON {} TO {}").format(tables, who))
        tables = sql.SQL(", ").join(sql.Identifier(t) for t in APPENDED)
        db.execute(sql.SQL("GRANT INSERT ON {} TO {}").format(tables, who))
        tables = sql.SQL(", ").join(sql.Identifier(t) for t in CHANGED)
        db.execute(sql.SQL("GRANT UPDATE ON {} TO {}").format(tables, who))
        db.execute(
            sql.SQL("GRANT USAGE ON ALL SEQUENCES IN SCHEMA {} TO {}").format(_schema(db), who)
        )
        db.execute(
            sql.SQL("GRANT EXECUTE ON FUNCTION memoracle_role_sees(name, text, text) TO {}").format(
                who
            )
        )


def _schema(db: PgDatabase) -> sql.Identifier:
    row = db.execute("SELECT current_schema()").fetchone()
    return sql.Identifier(str(row[0] if row else "public"))
