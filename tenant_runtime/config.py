"""How every area's settings are read: pydantic-settings over ``PRESSROOM_*``, validated once at start-up.

Each area has one settings class (``RuntimeSettings``, ``StorageSettings``,
``DispatchSettings``, ``ControlPlaneSettings``, ``ProbeSettings``) derived from
``PressroomSettings``. ``cls.from_env()`` reads the process environment (or a
mapping, in tests); a missing or malformed value raises ``SettingsError`` naming
the variable. Secrets are ``SecretStr``: never in a repr, a log line or an error.
Nothing else in Pressroom reads ``PRESSROOM_*`` variables.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any, Self

from pydantic import ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, EnvSettingsSource, PydanticBaseSettingsSource, SettingsConfigDict
from pydantic_settings.sources.utils import parse_env_vars

ENV_PREFIX = "PRESSROOM_"
# The mapping ``from_env`` reads instead of os.environ (tests); None: the process environment.
_ENVIRON: ContextVar[Mapping[str, str] | None] = ContextVar("pressroom_settings_environ", default=None)


class SettingsError(ValueError):
    """A setting is missing or malformed; the message names the variable (and never a secret's value)."""


class _MappingSource(EnvSettingsSource):
    """Environment variables from a given mapping rather than the process's."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        self._environ = environ
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return parse_env_vars(self._environ, self.case_sensitive, self.env_ignore_empty, self.env_parse_none_str)


_CLASSES: dict[str, type[BaseSettings]] = {}


class PressroomSettings(BaseSettings):
    """Base of every area's settings: ``PRESSROOM_<FIELD>`` variables (or a field's own alias), frozen."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _CLASSES[cls.__name__] = cls  # so an error from a nested area's settings names its own variables

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        frozen=True,
        extra="ignore",
        env_ignore_empty=True,
        populate_by_name=True,
        validate_default=True,
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        environ = _ENVIRON.get()
        return (init_settings, env_settings if environ is None else _MappingSource(settings_cls, environ))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **values: Any) -> Self:
        """Read the settings from ``environ`` (default: the process environment); ``values`` win over it."""
        token = _ENVIRON.set(environ)
        try:
            return cls(**values)
        except ValidationError as exc:
            raise SettingsError(describe(cls, exc)) from None
        finally:
            _ENVIRON.reset(token)


def env_name(cls: type[BaseSettings], field: str) -> str:
    """The variable a field is read from."""
    info: FieldInfo | None = cls.model_fields.get(field)
    alias = info.validation_alias if info is not None else None
    return alias if isinstance(alias, str) else f"{ENV_PREFIX}{field.upper()}"


def describe(cls: type[BaseSettings], exc: ValidationError) -> str:
    """One line per problem, each naming its variable; inputs are never shown (they may be secrets)."""
    cls = _CLASSES.get(exc.title, cls)
    lines = []
    for error in exc.errors(include_input=False, include_url=False):
        loc = [str(part) for part in error["loc"]]
        field = loc[0] if loc else ""
        # A field read through its alias is reported under the alias, which is the variable's name.
        name = env_name(cls, field) if field in cls.model_fields else field
        message = error["msg"].removeprefix("Value error, ")
        lines.append(f"{name}: {message}" if name else message)
    return "; ".join(lines) or str(exc)


__all__ = ["ENV_PREFIX", "PressroomSettings", "SettingsError", "describe", "env_name"]
