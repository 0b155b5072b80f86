"""The library's endpoint repository: configs as JSON in the ``endpoints`` table, keys elsewhere."""

from __future__ import annotations

import builtins
import contextlib
import shlex

from sqlalchemy import Engine, delete, insert, select, update

from studio.core.models.broken import BrokenRow, BrokenRowError, reason_of
from studio.core.models.endpoints import EndpointConfig, EndpointOrigin
from studio.core.outside import printable
from studio.core.store import endpoint_trust
from studio.core.store.authors import current_user
from studio.core.store.database import utcnow
from studio.core.store.errors import EndpointNotFound, NoEndpoint
from studio.core.store.holder import HasEngine
from studio.core.store.tables import TableRow
from studio.core.store.tables import endpoints as endpoints_table

#: endpoint fields stored only when set (see ``EndpointRepository.save``)
NETWORK_OPTIONS = ("api_version", "proxy", "ca_bundle")

#: the OS keyring service our endpoint keys are stored under (by endpoint name)
KEYRING_SERVICE = "grader-studio"


def delete_keyring_key(name: str) -> None:
    """Removing an endpoint removes its key too; the keyring is the library's secret half."""
    with contextlib.suppress(Exception):  # nothing stored or no backend: nothing to delete
        import keyring

        keyring.delete_password(KEYRING_SERVICE, name)


_COLUMNS = (endpoints_table.c.name, endpoints_table.c.config, endpoints_table.c.updated_by,
            endpoints_table.c.updated_at)


class EndpointRepository:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        #: the library's name in the user's endpoint approvals (store/endpoint_trust.py)
        self.identity, self._shared = endpoint_trust.library_identity(engine)

    def _read(self, row: TableRow) -> EndpointConfig | BrokenRow:
        """A stored row validated on read, as a config marked with where it came from (whose
        change this user must approve before a key goes to it); a row that does not validate (a
        teammate can write anything into it) is a ``BrokenRow`` naming it, never a traceback. The
        stored name must be the config's own (the key every run and judge names it by)."""
        try:
            config = EndpointConfig.model_validate_json(row.config)
            if config.name != row.name:
                raise ValueError(f"its config names it {config.name!r}")
        except (ValueError, TypeError) as exc:  # pydantic's ValidationError is a ValueError
            return BrokenRow("endpoint", str(row.name), str(row.updated_by or ""), reason_of(exc),
                             f"delete it with `grader-studio endpoints remove {shlex.quote(printable(str(row.name)))}`"
                             " (or Delete in Settings > Endpoints), or replace it with `grader-studio endpoints add "
                             "NAME --replace ...`")
        return config.from_library(EndpointOrigin(self.identity, self._shared, row.updated_by or "",
                                                  row.updated_at))

    def approve(self, config: EndpointConfig) -> None:
        """This user approves where ``config`` sends their key (they added or edited it here, or
        said so: ``endpoints trust``)."""
        endpoint_trust.approve(config, self.identity)

    @classmethod
    def of(cls, library: HasEngine | Engine) -> EndpointRepository:
        """Accepts a Library or a bare Engine (tests, tools that open the file themselves)."""
        engine = library if isinstance(library, Engine) else library.engine
        return cls(engine)

    def list(self) -> list[EndpointConfig]:
        """The endpoints that validate (a broken row is left out: ``listing`` shows it)."""
        return [entry for entry in self.listing() if isinstance(entry, EndpointConfig)]

    def listing(self) -> builtins.list[EndpointConfig | BrokenRow]:
        """Every stored endpoint by name, each validated on read: a row that does not validate (a
        teammate's write, a hand edit) is a ``BrokenRow`` naming it, and the others still list."""
        with self._engine.connect() as conn:
            rows = conn.execute(select(*_COLUMNS).order_by(endpoints_table.c.name)).all()
        return [self._read(row) for row in rows]

    def broken(self) -> builtins.list[BrokenRow]:
        return [entry for entry in self.listing() if isinstance(entry, BrokenRow)]

    def names(self) -> builtins.list[str]:
        with self._engine.connect() as conn:
            return list(conn.execute(select(endpoints_table.c.name).order_by(endpoints_table.c.name)).scalars())

    def get(self, name: str) -> EndpointConfig:
        """The endpoint ``name``; a ``BrokenRowError`` (a sentence) when its stored row is broken."""
        with self._engine.connect() as conn:
            row = conn.execute(select(*_COLUMNS).where(endpoints_table.c.name == name)).first()
        if row is None:
            raise EndpointNotFound(name, self.names())
        entry = self._read(row)
        if isinstance(entry, BrokenRow):
            raise BrokenRowError(entry)
        return entry

    def save(self, config: EndpointConfig) -> None:
        """Insert or replace; the stored JSON is the config itself, which holds no secret."""
        now = utcnow()
        # the network options added for issue 34 are stored only when set, so a library whose
        # endpoints use none of them stays readable by the version before (its model forbids
        # fields it does not know)
        unset = {field for field in NETWORK_OPTIONS if getattr(config, field) is None}
        data = config.model_dump_json(exclude_defaults=False, exclude=unset)
        with self._engine.begin() as conn:
            exists = conn.execute(
                select(endpoints_table.c.name).where(endpoints_table.c.name == config.name)
            ).first()
            if exists:
                conn.execute(
                    update(endpoints_table)
                    .where(endpoints_table.c.name == config.name)
                    .values(config=data, updated_at=now, updated_by=current_user())
                )
            else:
                conn.execute(
                    insert(endpoints_table).values(
                        name=config.name, config=data, created_at=now, updated_at=now, updated_by=current_user()
                    )
                )

    def remove(self, name: str) -> None:
        with self._engine.begin() as conn:
            deleted = conn.execute(
                delete(endpoints_table).where(endpoints_table.c.name == name)
            ).rowcount
        if not deleted:
            raise EndpointNotFound(name, self.names())
        delete_keyring_key(name)
        endpoint_trust.forget(name, self.identity)

    def resolve(self, *preferred: str | None) -> EndpointConfig:
        """The first named endpoint of ``preferred``; else the library's only endpoint."""
        for name in preferred:
            if name:
                return self.get(name)
        configs = self.list()
        if len(configs) == 1:
            return configs[0]
        if not configs:
            raise NoEndpoint(
                "this judge needs an endpoint; add one with `grader-studio endpoints add`"
            )
        raise NoEndpoint(
            "this judge names no endpoint and the library has several "
            f"({', '.join(c.name for c in configs)}); choose one with --endpoint"
        )


def demo_endpoint_config(name: str, port: int, host: str = "127.0.0.1") -> EndpointConfig:
    """The endpoint of ``grader-studio fake-judge``: labelled as a scripted judge, not a model."""
    return EndpointConfig(
        name=name,
        kind="openai",
        base_url=f"http://{host}:{port}/v1",
        model="fake-judge",
        timeout=10.0,
        max_concurrency=16,
        max_retries=1,
        supports_logprobs=True,
        label="scripted judge, not a model (grader-studio fake-judge)",
    )


def save_endpoint_if_missing(library: HasEngine | Engine, config: EndpointConfig) -> bool:
    """Save ``config`` unless an endpoint of that name exists; True when it was added."""
    repo = EndpointRepository.of(library)
    if config.name in repo.names():
        return False
    repo.save(config)
    return True
