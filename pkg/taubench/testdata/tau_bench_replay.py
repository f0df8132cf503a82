"""Replay exported tau-bench tasks through tau-bench's own tools and data.

    python3 tau_bench_replay.py TAU_BENCH_DIR ENV TASKS.json [TERMINATE_TOOL...]

TAU_BENCH_DIR is a checkout of the benchmark (the folder holding tau_bench/),
ENV the domain ("airline", "retail"), TASKS.json what `suitegen export
--format tau-bench` wrote. For every task the task's "data" is loaded over the
domain's data, as the benchmark would start it, and then:

- every action is invoked through the domain's tool, as the benchmark's reward
  replays them (terminate tools skipped); an answer starting with "Error:" is
  a failure;
- a task without a "tempting" move: the data after the actions must differ
  from the data after doing nothing, unless the task has outputs (then an
  agent saying nothing fails it).

Then it checks the benchmark's own reward through the SuiteEnv of
docs/EXPORT.md (the "suite_env.py" block, run as written), running each task
twice: 1.0 for an agent that makes the reference calls and says the outputs;
0.0 for the wrong agent, which is the one that makes the task's "tempting"
calls (and says every output) when it has them, else one that does nothing.

It prints one JSON object: counts and the failing tasks; exit status 1 when
any task fails. The benchmark's model client (litellm) is stubbed when it is
not installed: no model is called.
"""

import copy
import importlib
import json
import os
import sys
import types


def stub_package(name, path):
    mod = types.ModuleType(name)
    mod.__path__ = [path]
    sys.modules[name] = mod


def load_domain(root, env):
    base = os.path.join(root, "tau_bench")
    stub_package("tau_bench", base)
    stub_package("tau_bench.envs", os.path.join(base, "envs"))
    stub_package("tau_bench.envs." + env, os.path.join(base, "envs", env))
    tools = importlib.import_module("tau_bench.envs.%s.tools" % env)
    data = importlib.import_module("tau_bench.envs.%s.data" % env)
    by_name = {t.get_info()["function"]["name"]: t for t in tools.ALL_TOOLS}
    return by_name, data.load_data


DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "docs", "EXPORT.md")


def suite_env_source(path):
    """The fenced python block of docs/EXPORT.md that starts with "# suite_env.py"."""
    text = open(path).read()
    for block in text.split("```python\n")[1:]:
        code = block.split("```", 1)[0]
        if code.startswith("# suite_env.py"):
            return code
    raise SystemExit("no suite_env.py block in %s" % path)


class SilentUser:
    """A user who says nothing: the reward does not depend on the user."""

    def reset(self, instruction=None):
        return "hello"

    def step(self, content):
        return "ok"

    def get_total_cost(self):
        return 0.0


def rewards(root, env, path):
    """The benchmark's reward of the reference calls and of the wrong agent, per task."""
    try:
        import litellm  # noqa: F401
    except ImportError:
        stub = types.ModuleType("litellm")

        def completion(*args, **kwargs):
            raise RuntimeError("no model is called here")

        stub.completion = completion
        stub.provider_list = []
        sys.modules["litellm"] = stub
    types_mod = importlib.import_module("tau_bench.types")
    namespace = {}
    exec(compile(suite_env_source(DOC), DOC, "exec"), namespace)
    domain = sys.modules["tau_bench.envs." + env]
    out = []
    tasks = json.load(open(path))
    for i, task in enumerate(tasks):
        e = namespace["SuiteEnv"](path, domain, user_strategy="human", user_model=None, task_index=i)
        e.user = SilentUser()
        e.reset(task_index=i)
        for a in task.get("tempting") or []:
            e.step(types_mod.Action(name=a["name"], kwargs=a["kwargs"]))
        if task.get("tempting") and task["outputs"]:
            e.step(types_mod.Action(name="respond", kwargs={"content": " ".join(task["outputs"])}))
        wrong = e.calculate_reward().reward
        e = namespace["SuiteEnv"](path, domain, user_strategy="human", user_model=None, task_index=i)
        e.user = SilentUser()
        e.reset(task_index=i)
        reward = None
        for a in task["actions"]:
            r = e.step(types_mod.Action(name=a["name"], kwargs=a["kwargs"]))
            if r.done:
                reward = r.reward
        if task["outputs"]:
            e.step(types_mod.Action(name="respond", kwargs={"content": " ".join(task["outputs"])}))
        if reward is None or task["outputs"]:
            reward = e.calculate_reward().reward
        out.append((task["id"], reward, wrong, bool(task.get("tempting"))))
    return out


def overlay(data, patch):
    for coll, docs in (patch or {}).items():
        for key, doc in docs.items():
            if doc is None:
                data[coll].pop(key, None)
            else:
                data[coll][key] = copy.deepcopy(doc)
    return data


def state(data):
    return json.dumps(data, sort_keys=True)


def invoke(tools, data, name, kwargs):
    if name not in tools:
        return "Unknown action %s" % name
    try:
        return tools[name].invoke(data=data, **kwargs)
    except Exception as e:  # the benchmark turns exceptions into observations
        return "Error: %s" % e


def main():
    root, env, path = sys.argv[1], sys.argv[2], sys.argv[3]
    terminate = set(sys.argv[4:]) or {"transfer_to_human_agents"}
    tools, load_data = load_domain(root, env)
    tasks = json.load(open(path))
    failures = []
    changed = with_outputs = 0
    for task in tasks:
        data = overlay(load_data(), task.get("data"))
        nothing = state(data)
        errors = []
        for i, a in enumerate(task["actions"]):
            if a["name"] in terminate:
                continue
            obs = invoke(tools, data, a["name"], a["kwargs"])
            if isinstance(obs, str) and (obs.startswith("Error:") or obs.startswith("Unknown action")):
                errors.append("action %d (%s): %s" % (i + 1, a["name"], obs[:200]))
        moved = state(data) != nothing
        changed += moved
        with_outputs += bool(task["outputs"])
        if errors:
            failures.append({"task": task["id"], "why": errors})
        elif not moved and not task["outputs"] and not task.get("tempting"):
            failures.append({"task": task["id"], "why": ["doing nothing passes: the actions change nothing and there are no outputs"]})
    scored = gold_1 = nothing_0 = tempting = tempting_0 = 0
    for tid, reward, wrong, tempted in rewards(root, env, path):
        scored += 1
        gold_1 += reward == 1.0
        tempting += tempted
        if tempted:
            tempting_0 += wrong == 0.0
        else:
            nothing_0 += wrong == 0.0
        if reward != 1.0 or wrong != 0.0:
            failures.append({"task": tid, "why": ["reward %s for the reference calls, %s for %s" % (reward, wrong, "the tempting calls" if tempted else "doing nothing")]})
    print(json.dumps({"tasks": len(tasks), "changed": changed, "with_outputs": with_outputs, "rewarded": scored,
                      "gold_1": gold_1, "nothing_0": nothing_0, "with_tempting": tempting, "tempting_0": tempting_0,
                      "failures": failures}, indent=1))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
