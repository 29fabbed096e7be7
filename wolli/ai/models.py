"""The model registry: bundled catalog + ``models.json`` + extension providers.

The catalog (``wolli/ai/data/models.json``) is read on first use and validated in well
under a millisecond. ``WOLLI_HOME/models.json`` adds providers (local OpenAI-compatible
servers, proxies) or overrides ``baseUrl``/``headers``/``apiKey`` of built-in ones; a
mistake there is reported in :attr:`ModelRegistry.load_errors` and never takes the
built-in catalog down with it. Extensions add providers at runtime with
:meth:`ModelRegistry.register_provider`.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, get_args

from ..base.json_input import parse_json
from ..base.safe_files import CONFIG_FILE_LIMIT, read_text_capped
from ..base.wire import WireError
from ..config.errors import json_syntax_error, locate
from ..config.paths import models_path as default_models_path
from .auth import AuthStorage, is_key_reference
from .model_search import NON_ALNUM, is_dated, match_quality, version_of
from .redact import remember_secret, url_secrets
from .stream import known_apis, register_api, unregister_api
from .types import THINKING_LEVELS, KnownApi, Model, ThinkingLevel

# Native providers first: when the same model is reachable twice, prefer the direct route.
PROVIDER_ORDER = ("anthropic", "openai", "google", "xai", "mistral", "deepseek", "groq", "openrouter")
BUILTIN_APIS = frozenset(get_args(KnownApi))

_PROVIDER_KEYS = {"baseUrl", "api", "apiKey", "headers", "models", "compat"}
_MODEL_KEYS = {"id", "name", "api", "baseUrl", "reasoning", "input", "cost", "contextWindow", "maxTokens",
               "headers", "compat"}
_SNAKE_TO_CAMEL = {
    "base_url": "baseUrl", "api_key": "apiKey", "context_window": "contextWindow", "max_tokens": "maxTokens",
    "cache_read": "cacheRead", "cache_write": "cacheWrite",
}


@lru_cache(maxsize=1)
def _catalog_bytes() -> bytes:
    # beside this module in every install Wolli supports (importlib.resources costs ~5 ms)
    return (Path(__file__).parent / "data" / "models.json").read_bytes()


def builtin_models() -> list[Model]:
    """Fresh copies of the bundled catalog (callers may mutate them freely)."""
    return [Model.model_validate(data) for data in json.loads(_catalog_bytes())]


@dataclass
class ProviderConfig:
    """One provider entry of models.json, or one registered by an extension."""

    name: str
    base_url: str | None = None
    api: str | None = None
    api_key: str | None = None
    headers: dict[str, str] | None = None
    # pi's ``compat`` object for every model of the provider (a model's own keys win).
    compat: dict[str, Any] | None = None
    models: list[dict[str, Any]] = field(default_factory=list)
    source: str = "models.json"
    stream: Callable[..., Any] | None = None


class ModelRegistry:
    """All known models, which of them have keys, and pattern matching for ``--model``."""

    def __init__(self, auth: AuthStorage | None = None, models_path: Path | str | None = None):
        self.auth = auth if auth is not None else AuthStorage()
        self.models_path = Path(models_path).expanduser() if models_path is not None else default_models_path()
        self._extension: dict[str, ProviderConfig] = {}
        self._custom_apis: dict[str, str] = {}  # provider name -> api it registered
        self._models: list[Model] = []
        self._index: dict[tuple[str, str], Model] = {}
        self._providers: dict[str, ProviderConfig] = {}
        self._builtin_providers: set[str] = set()
        self._builtin_defaults: dict[str, tuple[str, str]] = {}
        self._errors: list[str] = []
        self._built = False
        self.auth.set_fallback_resolver(self._config_api_key)

    # ------------------------------------------------------------------ building

    @property
    def load_errors(self) -> list[str]:
        """Problems found in models.json (each names the file and the entry)."""
        self._ensure()
        return list(self._errors)

    def refresh(self) -> None:
        """Re-read models.json (after the user edits it)."""
        self._build()

    def _ensure(self) -> None:
        if not self._built:
            self._build()

    def _build(self) -> None:
        models: dict[tuple[str, str], Model] = {}
        for model in builtin_models():
            models[(model.provider, model.id)] = model
        self._builtin_providers = {provider for provider, _ in models}
        # New models under a built-in provider inherit its usual api and baseUrl.
        self._builtin_defaults = {}
        for model in models.values():
            self._builtin_defaults.setdefault(model.provider, (model.api, model.base_url))
        providers: dict[str, ProviderConfig] = {}
        errors: list[str] = []
        for cfg in self._read_models_json(errors):
            self._apply(cfg, models, providers, errors)
        for cfg in self._extension.values():
            self._apply(cfg, models, providers, errors)
        self._models = list(models.values())
        self._index = {(p.lower(), i.lower()): m for (p, i), m in models.items()}
        self._providers = providers
        self._errors = [self._with_line(e) for e in errors]
        self._built = True

    def _read_models_json(self, errors: list[str]) -> list[ProviderConfig]:
        path = self.models_path
        self._models_json_text: str | None = None
        try:
            text = read_text_capped(path, CONFIG_FILE_LIMIT)
        except FileNotFoundError:
            return []
        except (OSError, UnicodeDecodeError) as exc:
            errors.append(f"{path}: cannot read ({exc}); using the built-in models only")
            return []
        if not text.strip():
            return []
        try:
            data = parse_json(text)
        except json.JSONDecodeError as exc:
            errors.append(json_syntax_error(path, exc, "using the built-in models only until it is fixed"))
            return []
        if not isinstance(data, dict) or not isinstance(data.get("providers", {}), dict):
            errors.append(f'{path}: expected {{"providers": {{"<name>": {{...}}}}}}; using the built-in models only')
            return []
        unknown = sorted(set(data) - {"providers", "$schema"})
        if unknown:
            errors.append(f"{path}: unknown top-level keys {unknown} ignored (only \"providers\" is read)")
        configs = []
        for name, entry in data.get("providers", {}).items():
            try:
                configs.append(_parse_provider(name, entry, "models.json", errors, f"{path}: providers.{_key(name)}"))
            except ValueError as exc:
                errors.append(str(exc))
        self._models_json_text = text  # to put line numbers on the problems found later
        return configs

    def _with_line(self, error: str) -> str:
        """``<path>: providers.x.api: ...`` -> ``<path>:<line>: providers.x.api: ...``."""
        prefix = f"{self.models_path}: "
        text = self._models_json_text
        if text is None or not error.startswith(prefix):
            return error
        rest = error[len(prefix):]
        line = locate(text, rest.split(":", 1)[0])
        return f"{self.models_path}:{line}: {rest}" if line else error

    def _apply(
        self,
        cfg: ProviderConfig,
        models: dict[tuple[str, str], Model],
        providers: dict[str, ProviderConfig],
        errors: list[str],
    ) -> None:
        """Merge one provider entry into ``models``; problems go to ``errors``."""
        where = f"{self.models_path}: providers.{_key(cfg.name)}" if cfg.source == "models.json" else (
            f"provider '{cfg.name}' (registered by an extension)"
        )
        existing = [key for key in models if key[0] == cfg.name]
        if not cfg.models and not existing:
            known = ", ".join(sorted(self._builtin_providers))
            errors.append(f"{where}: defines no models and is not a built-in provider ({known}); add a \"models\" list")
            return
        if cfg.api and cfg.stream is None and cfg.api not in known_apis():
            errors.append(f"{where}.api: {_unknown_api_message(cfg.api)}; provider skipped")
            return
        previous = providers.get(cfg.name)
        merged = replace(previous) if previous else ProviderConfig(name=cfg.name, source=cfg.source)
        for attr in ("base_url", "api", "api_key", "stream"):
            value = getattr(cfg, attr)
            if value is not None:
                setattr(merged, attr, value)
        if cfg.headers:
            merged.headers = {**(merged.headers or {}), **cfg.headers}
        if cfg.compat:
            merged.compat = {**(merged.compat or {}), **cfg.compat}
        merged.source = cfg.source
        providers[cfg.name] = merged
        # Provider-level overrides reach every model already known for this provider.
        update: dict[str, Any] = {}
        if cfg.base_url:
            update["base_url"] = cfg.base_url
        if cfg.api:
            update["api"] = cfg.api
        for key in existing:
            current = models[key]
            changes = dict(update)
            if cfg.headers:
                changes["headers"] = {**(current.headers or {}), **cfg.headers}
            if cfg.compat:
                changes["compat"] = {**(current.compat or {}), **cfg.compat}
            if changes:
                models[key] = current.model_copy(update=changes)
        for position, raw in enumerate(cfg.models):
            model = self._build_model(merged, raw, models, f"{where}.models[{position}]", errors)
            if model is not None:
                models[(model.provider, model.id)] = model

    def _build_model(
        self,
        cfg: ProviderConfig,
        raw: dict[str, Any],
        models: dict[tuple[str, str], Model],
        where: str,
        errors: list[str],
    ) -> Model | None:
        model_id = raw.get("id")
        default_api, default_url = self._builtin_defaults.get(cfg.name, (None, None))
        base = models.get((cfg.name, model_id)) if isinstance(model_id, str) else None
        missing = self._missing_fields(cfg, raw, base, default_api, default_url)
        # An id with a line break or a control character is quoted, so the error stays one line.
        shown = model_id if not isinstance(model_id, str) or model_id.isprintable() else json.dumps(model_id)
        if missing:
            errors.append(f"{where}{f' ({shown})' if isinstance(model_id, str) and model_id.strip() else ''}: "
                          f"{_missing_message(missing)}; model skipped")
            return None
        where = f"{where} ({shown})"
        _remember_secrets(None, raw.get("headers") if isinstance(raw.get("headers"), dict) else None,
                          raw.get("baseUrl") if isinstance(raw.get("baseUrl"), str) else None)
        for key in sorted(set(raw) - _MODEL_KEYS):
            errors.append(f"{where}: unknown key {key!r}{_nearest(key, _MODEL_KEYS)}; ignored")
        data: dict[str, Any] = base.to_json_dict() if base is not None else {}
        raw = dict(raw)
        if isinstance(raw.get("compat"), dict):
            raw["compat"] = _checked_compat(raw["compat"], f"{where}.compat", errors)
        if cfg.compat:  # the provider's compat under the model's own keys
            raw["compat"] = {**cfg.compat, **(raw["compat"] if isinstance(raw.get("compat"), dict) else {})}
        for key in _MODEL_KEYS & set(raw):
            if key in ("cost", "headers", "compat") and isinstance(raw[key], dict) and isinstance(data.get(key), dict):
                data[key] = {**data[key], **raw[key]}
            else:
                data[key] = raw[key]
        data["provider"] = cfg.name
        data.setdefault("api", cfg.api or default_api)
        data.setdefault("baseUrl", cfg.base_url or default_url)
        if data.get("baseUrl") is None:
            data["baseUrl"] = ""
        if cfg.headers and base is None:
            data["headers"] = {**cfg.headers, **(data.get("headers") or {})}
        if "api" in raw and raw["api"] != cfg.api and raw["api"] not in known_apis():
            errors.append(f"{where}: {_unknown_api_message(raw['api'])}")
        try:
            return Model.model_validate(data)
        except WireError as exc:
            errors.append(f"{where}: {exc}; model skipped")
            return None

    @staticmethod
    def _missing_fields(cfg: ProviderConfig, raw: dict[str, Any], base: Model | None,
                        default_api: str | None, default_url: str | None) -> list[str]:
        """Every required field a models.json model lacks, named at once."""
        missing = []
        model_id = raw.get("id")
        if not isinstance(model_id, str) or not model_id.strip():
            missing.append("id")
        api = raw.get("api") or (base.api if base is not None else None) or cfg.api or default_api
        if api is None:
            missing.append("api")
        url = raw.get("baseUrl") or (base.base_url if base is not None else None) or cfg.base_url or default_url
        if url is None and (api is None or (api in BUILTIN_APIS and api != "faux")):
            missing.append("baseUrl")
        return missing

    # ------------------------------------------------------------------ lookups

    def all(self) -> list[Model]:
        self._ensure()
        return list(self._models)

    def providers(self) -> list[str]:
        """Provider names that have at least one model, native providers first."""
        self._ensure()
        names = {m.provider for m in self._models}
        return sorted(names, key=lambda name: (_provider_rank(name), name))

    def find(self, provider: str, model_id: str) -> Model | None:
        self._ensure()
        return self._index.get((provider.lower(), model_id.lower()))

    def get(self, key: str) -> Model | None:
        """Look up ``"provider/id"`` (the id may itself contain slashes, as on OpenRouter)."""
        provider, sep, model_id = key.partition("/")
        return self.find(provider, model_id) if sep else None

    def available(self) -> list[Model]:
        """Models whose provider has a key, or needs none (local servers, faux)."""
        self._ensure()
        ready: dict[str, bool] = {}
        out = []
        for model in self._models:
            if model.api == "faux":
                out.append(model)
                continue
            if model.provider not in ready:
                ready[model.provider] = self._provider_ready(model.provider)
            if ready[model.provider]:
                out.append(model)
        return out

    def is_available(self, model: Model) -> bool:
        return model.api == "faux" or self._provider_ready(model.provider)

    def _provider_ready(self, provider: str) -> bool:
        cfg = self._providers.get(provider)
        if cfg is not None and (cfg.api_key or provider not in self._builtin_providers):
            return True  # a custom provider without apiKey is a local server that needs none
        return self.auth.has_auth(provider)

    def get_api_key(self, model_or_provider: Model | str, override: str | None = None) -> str | None:
        """The key to send, or None (send no auth header). May raise ``AuthError``."""
        self._ensure()
        provider = model_or_provider.provider if isinstance(model_or_provider, Model) else model_or_provider
        return self.auth.get_api_key(provider, override)

    def _config_api_key(self, provider: str) -> str | None:
        self._ensure()
        cfg = self._providers.get(provider)
        return cfg.api_key if cfg is not None else None

    # ------------------------------------------------------------------ extensions

    def register_provider(self, name: str, config: dict[str, Any]) -> None:
        """Add or override a provider (same shape as a models.json entry).

        ``config["stream"]``, if given, is an ``async run(model, context, options, builder)``
        registered under ``config["api"]`` (default: the provider name). Raises
        ``ValueError`` describing every problem; nothing changes in that case.
        """
        if not isinstance(name, str) or not name.strip() or "/" in name:
            raise ValueError(f"provider name must be a non-empty string without '/', got {name!r}")
        if not isinstance(config, dict):
            raise ValueError(f"provider '{name}': config must be a dict like a models.json provider entry")
        config = dict(config)
        stream = config.pop("stream", None)
        if stream is not None and not callable(stream):
            raise ValueError(f"provider '{name}': 'stream' must be a callable run(model, context, options, builder)")
        problems: list[str] = []
        cfg = _parse_provider(name, _with_models_as_dicts(config), "extension", problems, f"provider '{name}'")
        if stream is not None:
            cfg.api = cfg.api or name
            if cfg.api in BUILTIN_APIS:
                raise ValueError(
                    f"provider '{name}': a custom stream needs its own api name, not the built-in "
                    f"'{cfg.api}' (set config['api'] to e.g. '{name}-api')"
                )
            cfg.stream = stream
        self._ensure()
        trial_models = {(m.provider, m.id): m for m in self._models}
        self._apply(cfg, trial_models, dict(self._providers), problems)
        if problems:
            raise ValueError("; ".join(problems))
        previous_api = self._custom_apis.pop(name, None)
        if previous_api and (stream is None or previous_api != cfg.api):
            unregister_api(previous_api)
        if stream is not None and cfg.api:
            register_api(cfg.api, stream)
            self._custom_apis[name] = cfg.api
        self._extension[name] = cfg
        self._build()

    def unregister_provider(self, name: str) -> bool:
        """Remove an extension provider (built-in models it overrode come back)."""
        removed = self._extension.pop(name, None)
        api = self._custom_apis.pop(name, None)
        if api:
            unregister_api(api)
        if removed is not None:
            self._build()
        return removed is not None

    # ------------------------------------------------------------------ resolve

    def resolve(self, pattern: str) -> tuple[Model, ThinkingLevel | None]:
        """Find the model meant by ``--model``: ``provider/id[:thinking]`` or part of an id/name.

        Exact matches win; otherwise the best fuzzy match, preferring models with a key,
        closer matches, then newer versions and direct providers. Raises ``ValueError``
        with suggestions when nothing matches.
        """
        self._ensure()
        text = (pattern or "").strip()
        if not text:
            raise ValueError("empty model name; use provider/id, e.g. anthropic/claude-sonnet-4-6")
        exact = self._exact(text)
        if exact is not None:
            return exact, None
        base, sep, suffix = text.rpartition(":")
        thinking: ThinkingLevel | None = None
        if sep and base:
            level = suffix.strip().lower()
            if level in THINKING_LEVELS:
                thinking = level  # type: ignore[assignment]
                text = base.strip()
                exact = self._exact(text)
                if exact is not None:
                    return exact, thinking
            elif self._exact(base) is not None or self._fuzzy(base):
                raise ValueError(
                    f"unknown thinking level {suffix!r} in {pattern!r}; use one of {', '.join(THINKING_LEVELS)}"
                )
        matches = self._fuzzy(text)
        if matches:
            return matches[0], thinking
        raise ValueError(self._no_match_message(pattern, text))

    def _exact(self, text: str) -> Model | None:
        lowered = text.lower()
        provider, sep, rest = lowered.partition("/")
        if sep:
            model = self._index.get((provider, rest))
            if model is not None:
                return model
        same_id = [m for m in self._models if m.id.lower() == lowered]
        if not same_id:
            return None
        return min(same_id, key=lambda m: (not self.is_available(m), _provider_rank(m.provider)))

    def _fuzzy(self, text: str) -> list[Model]:
        query = text.lower()
        pool: Iterable[Model] = self._models
        provider, sep, rest = query.partition("/")
        if sep and rest and provider in {m.provider.lower() for m in self._models}:
            pool = [m for m in self._models if m.provider.lower() == provider]
            query = rest
        words = set(NON_ALNUM.split(query))
        ready: dict[str, bool] = {}
        scored = []
        for model in pool:
            quality = match_quality(query, model)
            if quality <= 0:
                continue
            if model.provider not in ready:
                ready[model.provider] = model.api == "faux" or self._provider_ready(model.provider)
            scored.append(((
                ready[model.provider],
                model.provider.lower() in words,  # "deepseek" means DeepSeek's own API
                quality,
                not is_dated(model.id),  # aliases before pinned snapshots
                version_of(model.id),
                -_provider_rank(model.provider),
                -len(model.id),
            ), model))
        scored.sort(key=lambda pair: pair[0], reverse=True)
        return [model for _, model in scored]

    def _no_match_message(self, pattern: str, text: str) -> str:
        names = [m.key for m in self._models] + [m.id for m in self._models]
        close = difflib.get_close_matches(text.lower(), [n.lower() for n in names], n=8, cutoff=0.5)
        by_lower = {m.key.lower(): m.key for m in self._models}
        by_lower.update({m.id.lower(): m.key for m in self._models if m.id.lower() not in by_lower})
        suggestions = list(dict.fromkeys(by_lower[c] for c in close if c in by_lower))[:5]
        message = f"no model matches {pattern!r}"
        provider, sep, _ = text.partition("/")
        if sep and provider.lower() not in {m.provider.lower() for m in self._models}:
            message += f"; unknown provider {provider!r} (known: {', '.join(self.providers())})"
        if suggestions:
            message += f"; did you mean {', '.join(suggestions)}?"
        else:
            message += (
                "; use provider/id (e.g. anthropic/claude-sonnet-4-6), see `wolli --list-models`, "
                "or add the model to models.json"
            )
        return message


# ---------------------------------------------------------------------- helpers


def _parse_provider(name: object, entry: object, source: str, errors: list[str], where: str) -> ProviderConfig:
    """Check one provider entry's shape; raises ValueError for problems that void it."""
    if not isinstance(name, str) or not name.strip() or "/" in name:
        raise ValueError(f"{where}: provider name {name!r} must be a non-empty string without '/'")
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: expected an object with baseUrl, api, apiKey, headers, models")
    entry = _camel_keys(entry)
    for key in sorted(set(entry) - _PROVIDER_KEYS):
        errors.append(f"{where}: unknown key {key!r}{_nearest(key, _PROVIDER_KEYS)}; ignored")
    cfg = ProviderConfig(name=name, source=source)
    for key, attr in (("baseUrl", "base_url"), ("api", "api"), ("apiKey", "api_key")):
        value = entry.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"{where}: {key!r} must be a non-empty string")
        setattr(cfg, attr, value.strip().rstrip("/") if key == "baseUrl" else value.strip())
    compat = entry.get("compat")
    if compat is not None:
        if isinstance(compat, dict):
            cfg.compat = _checked_compat(compat, f"{where}.compat", errors)
        else:
            errors.append(f"{where}: 'compat' must be an object (pi's compatibility switches); ignored")
    headers = entry.get("headers")
    if headers is not None:
        if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
            raise ValueError(f"{where}: 'headers' must be an object of string values")
        cfg.headers = {str(k): v for k, v in headers.items()}
    _remember_secrets(cfg.api_key, cfg.headers, cfg.base_url)
    models = entry.get("models", [])
    if not isinstance(models, list):
        raise ValueError(f"{where}: 'models' must be a list of model objects")
    for position, raw in enumerate(models):
        if isinstance(raw, dict):
            cfg.models.append(_camel_keys(raw))
        else:
            errors.append(f"{where}.models[{position}]: expected an object with at least an \"id\"; skipped")
    return cfg


def _remember_secrets(api_key: str | None, headers: dict[str, Any] | None, base_url: str | None) -> None:
    """Keys, header values and URL credentials of models.json: never printed or stored
    (:mod:`.redact`); a key given as an env name or ``!command`` is remembered once resolved."""
    if api_key and not is_key_reference(api_key):
        remember_secret(api_key)
    for value in (headers or {}).values():
        remember_secret(value)
    for secret in url_secrets(base_url):
        remember_secret(secret)


_FIELD_HINTS = {
    "id": '"id" (the model name the server expects)',
    "api": '"api" (on the provider or the model, e.g. "openai-completions")',
    "baseUrl": '"baseUrl" (on the provider, e.g. "http://localhost:11434/v1")',
}


def _missing_message(missing: list[str]) -> str:
    names = [_FIELD_HINTS[name] for name in missing]
    joined = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"missing {joined}"


def _checked_compat(compat: dict[str, Any], where: str, errors: list[str]) -> dict[str, Any]:
    """pi's ``compat`` object as Wolli uses it; wrong or unknown keys reported and dropped."""
    from .providers.openai_compat import check_compat

    clean, problems = check_compat(compat)
    errors.extend(f"{where}.{problem}" for problem in problems)
    return clean


def _key(name: object) -> str:
    """A provider name as an error message shows it: as typed, or JSON-quoted when it holds
    line breaks, control characters or edge spaces (a message stays one line)."""
    text = str(name)
    if text and text.isprintable() and text.strip() == text:
        return text
    return json.dumps(text, ensure_ascii=False)


def _with_models_as_dicts(config: dict[str, Any]) -> dict[str, Any]:
    models = config.get("models")
    if isinstance(models, list):
        config["models"] = [m.to_json_dict() if isinstance(m, Model) else m for m in models]
    return config


def _camel_keys(data: dict[str, Any]) -> dict[str, Any]:
    """Accept snake_case spellings from Python callers (``base_url`` -> ``baseUrl``)."""
    out = {}
    for key, value in data.items():
        key = _SNAKE_TO_CAMEL.get(key, key)
        if key == "cost" and isinstance(value, dict):
            value = {_SNAKE_TO_CAMEL.get(k, k): v for k, v in value.items()}
        out[key] = value
    return out


def _nearest(key: str, valid: Iterable[str]) -> str:
    close = difflib.get_close_matches(key, sorted(valid), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _unknown_api_message(api: str) -> str:
    apis = known_apis()
    close = difflib.get_close_matches(api, apis, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return f"unknown api {api!r}; {hint}known: {', '.join(apis)}"


def _provider_rank(provider: str) -> int:
    try:
        return PROVIDER_ORDER.index(provider)
    except ValueError:
        return len(PROVIDER_ORDER)
