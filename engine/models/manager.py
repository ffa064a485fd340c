"""Loads the model for a tier, lazily and once, walking the fallback chain when a profile cannot load.

Every failure names the config key to fix (``models.profiles.<name>.path`` ...). A missing or non-GGUF file fails
before any backend is imported, so loading never hangs on a broken profile. Backends are imported only when a
profile of that kind is loaded, so importing this module is cheap.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from engine.config import ModelProfile, Settings
from engine.models.base import ChatModel, ModelError, ModelUnavailable

# factory(profile_name, profile, settings) -> a loaded ChatModel (raises ModelError naming the config key)
BackendFactory = Callable[[str, ModelProfile, Settings], ChatModel]



# The notice a consult gets when its tier's model could not be loaded and a fallback profile drafts instead; the
# app reads it back (``fallback_of``) so that its status line does not call the tier's model ready.
_FALLBACK_RE = re.compile(r"^Tier (\d) model '[^']*' unavailable .*; using '([^']+)' instead\.", re.DOTALL)


def fallback_notice(tier: int, model: str, why: str, used: str) -> str:
    return f"Tier {tier} model '{model}' unavailable ({why}); using '{used}' instead."


def fallback_of(message: str) -> tuple[str, str] | None:
    """(tier, the profile used instead) when ``message`` is a ``fallback_notice``."""
    m = _FALLBACK_RE.match(message)
    return (m[1], m[2]) if m else None

@dataclass(frozen=True)
class LoadedModel:
    model: ChatModel
    profile: str
    tier: int
    notices: tuple[str, ...] = ()


def _resolve(name: str, profile: ModelProfile, settings: Settings) -> Path:
    from engine.models.embedded import resolve_model_path

    key = f"models.profiles.{name}.path"
    if not profile.path.strip():
        raise ModelError(f"{key}: is empty; set it to a model file/folder or embedded:NAME")
    try:
        return resolve_model_path(profile.path, settings.model_dir)
    except ModelError as exc:
        raise ModelError(f"{key}: {exc}") from None


def _llama_cpp(name: str, profile: ModelProfile, settings: Settings) -> ChatModel:
    from engine.models.llama_cpp import LlamaCppModel

    return LlamaCppModel(name, profile, _resolve(name, profile, settings)).load()


def _transformers(name: str, profile: ModelProfile, settings: Settings) -> ChatModel:
    from engine.models.transformers_bf16 import TransformersModel

    return TransformersModel(name, profile, _resolve(name, profile, settings)).load()


def _openai(name: str, profile: ModelProfile, settings: Settings) -> ChatModel:  # noqa: ARG001
    from engine.models.openai_compat import OpenAICompatModel

    return OpenAICompatModel(name, profile).load()


DEFAULT_FACTORIES: dict[str, BackendFactory] = {
    "llama_cpp": _llama_cpp,
    "transformers": _transformers,
    "openai": _openai,
}


class ModelManager:
    """One per app. Thread-safe; a profile is loaded at most once and then shared."""

    def __init__(self, settings: Settings, factories: dict[str, BackendFactory] | None = None) -> None:
        self.settings = settings
        self.factories = {**DEFAULT_FACTORIES, **(factories or {})}
        self._models: dict[str, ChatModel] = {}
        self._lock = threading.RLock()

    def register(self, name: str, model: ChatModel) -> None:
        """Use ``model`` for profile ``name`` (tests inject fakes; the name need not be in the settings)."""
        with self._lock:
            self._models[name] = model

    def loaded(self) -> dict[str, ChatModel]:
        with self._lock:
            return dict(self._models)

    def load_profile(self, name: str) -> ChatModel:
        """The model for profile ``name``, loading it on first use. Raises ModelError naming the config key."""
        with self._lock:
            if name in self._models:
                return self._models[name]
            profiles = self.settings.models.profiles
            if name not in profiles:
                raise ModelError(f"models.profiles.{name}: no such profile; defined: {sorted(profiles)}")
            profile = profiles[name]
            factory = self.factories.get(profile.backend)
            if factory is None:
                raise ModelError(f"models.profiles.{name}.backend: {profile.backend!r} has no backend; "
                                 f"known: {sorted(self.factories)}")
            try:
                model = factory(name, profile, self.settings)
            except ModelError:
                raise
            except Exception as exc:  # noqa: BLE001 - a backend bug must not crash the app; say where
                raise ModelError(f"models.profiles.{name}: the {profile.backend} backend failed to load: "
                                 f"{type(exc).__name__}: {exc}") from None
            self._models[name] = model
            return model

    def get(self, tier: int) -> LoadedModel:
        """The model for tier 1 or 2; if its profile fails, the first profile of the fallback chain that loads."""
        if tier not in (1, 2):
            raise ValueError(f"tier must be 1 or 2, not {tier!r}")
        wanted = self.settings.models.tier1 if tier == 1 else self.settings.models.tier2
        failures: list[tuple[str, str]] = []
        try:
            return LoadedModel(self.load_profile(wanted), wanted, tier)
        except ModelError as exc:
            failures.append((wanted, str(exc)))
        for name in self.settings.models.fallback_chain:
            if any(name == failed for failed, _ in failures):
                continue
            try:
                model = self.load_profile(name)
            except ModelError as exc:
                failures.append((name, str(exc)))
                continue
            first = failures[0]
            notices = [fallback_notice(tier, first[0], first[1], name)]
            notices += [f"Fallback model '{n}' also unavailable ({why})." for n, why in failures[1:]]
            return LoadedModel(model, name, tier, tuple(notices))
        lines = "\n".join(f"  - '{n}': {why}" for n, why in failures)
        raise ModelUnavailable(
            f"No model could be loaded for tier {tier} (tried models.tier{tier} and models.fallback_chain):\n"
            f"{lines}\nFix these keys in {self.settings.source or 'the settings'}, or run `oncotui models setup`."
        )

    def close(self) -> None:
        """Drop every loaded model (frees memory); the next get() loads again."""
        with self._lock:
            models, self._models = self._models, {}
        for model in models.values():
            close = getattr(model, "close", None)
            if callable(close):
                try:
                    close()
                except Exception:  # noqa: BLE001,S110 - best effort on shutdown
                    pass
