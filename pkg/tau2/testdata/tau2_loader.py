"""Load τ²-bench's own modules from a checkout without its package extras.

τ²-bench's top-level package imports its runner, agents and model clients;
only the data models, environments, tools and the environment evaluator are
needed to check an export. The package is registered without running its
__init__, and third-party modules the checkout imports but this machine may
lack are stubbed with the behaviour these modules use (each stub only when
the real module is absent):

- loguru: a logger whose methods do nothing;
- addict: Dict with addict's recursive update (a dict value merges into a
  dict value, anything else replaces), used by update_pydantic_model_with_dict;
- toml: loads through the standard library's tomllib;
- docstring_parser: parse() giving an empty docstring (tool descriptions are
  not needed to replay calls);
- deepdiff, dotenv, pandas: imported by modules whose used parts do not call them.
"""

import importlib
import os
import sys
import types


def _absent(name):
    try:
        importlib.import_module(name)
        return False
    except ImportError:
        return True


def _stub_loguru():
    mod = types.ModuleType("loguru")

    class _Logger:
        def __getattr__(self, _name):
            return lambda *a, **k: None

    mod.logger = _Logger()
    sys.modules["loguru"] = mod


def _stub_addict():
    mod = types.ModuleType("addict")

    class Dict(dict):
        def __init__(self, *args, **kwargs):
            super().__init__()
            for a in args:
                for k, v in dict(a).items():
                    self[k] = self._hook(v)
            for k, v in kwargs.items():
                self[k] = self._hook(v)

        @classmethod
        def _hook(cls, v):
            if isinstance(v, dict) and not isinstance(v, Dict):
                return cls(v)
            if isinstance(v, (list, tuple)):
                return type(v)(cls._hook(e) for e in v)
            return v

        def update(self, *args, **kwargs):
            other = {}
            for a in args:
                other.update(a)
            other.update(kwargs)
            for k, v in other.items():
                if k in self and isinstance(self[k], dict) and isinstance(v, dict):
                    self[k].update(v)
                else:
                    self[k] = self._hook(v)

        def to_dict(self):
            def plain(v):
                if isinstance(v, Dict):
                    return v.to_dict()
                if isinstance(v, (list, tuple)):
                    return type(v)(plain(e) for e in v)
                return v

            return {k: plain(v) for k, v in self.items()}

    mod.Dict = Dict
    sys.modules["addict"] = mod


def _stub_toml():
    import tomllib

    mod = types.ModuleType("toml")

    def load(f):
        if isinstance(f, (str, os.PathLike)):
            with open(f, "rb") as fh:
                return tomllib.load(fh)
        data = f.read()
        return tomllib.loads(data if isinstance(data, str) else data.decode())

    mod.load = load
    mod.loads = tomllib.loads

    def dump(*_a, **_k):
        raise NotImplementedError("toml.dump is not available in this loader")

    mod.dump = dump
    mod.dumps = dump
    sys.modules["toml"] = mod


def _stub_empty(name, **attrs):
    mod = types.ModuleType(name)
    for k, v in attrs.items():
        setattr(mod, k, v)
    sys.modules[name] = mod


def load(tau2_dir):
    """Make `import tau2.…` work from the checkout at tau2_dir."""
    src = os.path.join(tau2_dir, "src")
    if _absent("loguru"):
        _stub_loguru()
    if _absent("addict"):
        _stub_addict()
    if _absent("toml"):
        _stub_toml()
    if _absent("docstring_parser"):
        empty = types.SimpleNamespace(short_description="", long_description="", params=[],
                                      returns=None, raises=[], examples=[])
        _stub_empty("docstring_parser", parse=lambda _doc: empty)
    if _absent("deepdiff"):
        _stub_empty("deepdiff", DeepDiff=lambda *a, **k: {})
    if _absent("dotenv"):
        _stub_empty("dotenv", load_dotenv=lambda *a, **k: None)
    if _absent("pandas"):
        _stub_empty("pandas", DataFrame=object)
    pkg = types.ModuleType("tau2")
    pkg.__path__ = [os.path.join(src, "tau2")]
    sys.modules["tau2"] = pkg
    if src not in sys.path:
        sys.path.insert(0, src)
