"""Play sessions of tool calls through tau-bench's own tools of one domain.

    python3 tau_bench_tools.py TAU_BENCH_DIR DOMAIN SESSIONS.json

DOMAIN is a folder of tau_bench/envs (airline, retail): the converters'
fidelity tests compare a port's handlers with it.

SESSIONS.json: {"sessions": [{"name", "calls": [{"tool", "args"}], "docs":
[[collection, key], ...]}]}. Each session starts from the published data;
each call is answered as the benchmark's environment answers it (an exception
becomes "Error: ..."). Prints, per session, the answers and the documents
named in "docs" afterwards (null when absent). Only the tools and data modules
are imported, so the benchmark's model dependencies need not be installed.
"""

import importlib
import json
import os
import sys
import types


def stub_package(name, path):
    mod = types.ModuleType(name)
    mod.__path__ = [path]
    sys.modules[name] = mod


def main():
    root, domain, path = sys.argv[1], sys.argv[2], sys.argv[3]
    base = os.path.join(root, "tau_bench")
    env = "tau_bench.envs." + domain
    stub_package("tau_bench", base)
    stub_package("tau_bench.envs", os.path.join(base, "envs"))
    stub_package(env, os.path.join(base, "envs", domain))
    tools = importlib.import_module(env + ".tools")
    load_data = importlib.import_module(env + ".data").load_data
    by_name = {t.get_info()["function"]["name"]: t for t in tools.ALL_TOOLS}
    out = []
    for s in json.load(open(path))["sessions"]:
        data = load_data()
        answers = []
        for c in s["calls"]:
            try:
                answers.append(by_name[c["tool"]].invoke(data=data, **c["args"]))
            except Exception as e:
                answers.append("Error: %s" % e)
        docs = {}
        for coll, key in s.get("docs") or []:
            docs.setdefault(coll, {})[key] = data[coll].get(key)
        out.append({"name": s["name"], "answers": answers, "docs": docs})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
