"""The exception types whose message is written for a person (shown without a traceback)."""

from __future__ import annotations


def user_error_types() -> tuple[type[Exception], ...]:
    from engine.checkpoint import StoreError
    from engine.config import ConfigError
    from engine.graph import EngineError
    from engine.models.base import ModelError
    from engine.signoff import SignOffError
    from kb.errors import KBError

    return (ConfigError, EngineError, ModelError, StoreError, KBError, SignOffError)
