"""Replay τ-bench tasks' reference actions through the benchmark's own tools.

Usage: python3 tau_replay.py /path/to/tau-bench airline|retail [TASK_INDEX...]

For each task of tau_bench/envs/<domain>/tasks_test.py (all when no index
is given) it loads the domain's data, runs the actions in order with the
benchmark's tool classes, and prints:
  - every action answered "Error: ..." (the reference fails in the benchmark);
  - each output the task wants said, and whether any action's answer holds it;
  - each state-changing action whose removal leaves the same end data
    (the benchmark cannot tell the task's actions from the task without it);
  - the reservations or orders the actions change.
Only the tools, the data and the task list are imported: none of the
benchmark's model dependencies are needed.
"""
import copy
import importlib
import json
import sys
import types


def stub(name, path):
    m = types.ModuleType(name)
    m.__path__ = [path]
    sys.modules[name] = m


def load(root, domain):
    sys.path.insert(0, root)
    stub("tau_bench", root + "/tau_bench")
    stub("tau_bench.envs", root + "/tau_bench/envs")
    stub("tau_bench.envs." + domain, root + "/tau_bench/envs/" + domain)
    tools = importlib.import_module("tau_bench.envs.%s.tools" % domain)
    data = importlib.import_module("tau_bench.envs.%s.data" % domain)
    tasks = importlib.import_module("tau_bench.envs.%s.tasks_test" % domain)
    lst = getattr(tasks, "TASKS", None) or getattr(tasks, "TASKS_TEST")
    by_name = {t.get_info()["function"]["name"]: t for t in tools.ALL_TOOLS}
    return by_name, data.load_data, lst


def replay(by_name, fresh, actions):
    d = fresh()
    answers = []
    for a in actions:
        if a.name == "transfer_to_human_agents":
            answers.append("Transfer successful")
            continue
        try:
            answers.append(str(by_name[a.name].invoke(data=d, **a.kwargs)))
        except Exception as e:  # the benchmark shows the agent "Error: <e>"
            answers.append("Error: %s" % e)
    return d, answers


def main():
    root, domain = sys.argv[1], sys.argv[2]
    by_name, load_data, tasks = load(root, domain)
    base = load_data()
    fresh = lambda: copy.deepcopy(base)
    pick = [int(x) for x in sys.argv[3:]] or range(len(tasks))
    reads = {"get_user_details", "get_reservation_details", "get_order_details", "get_product_details",
             "search_direct_flight", "search_onestop_flight", "list_all_airports", "calculate", "think",
             "find_user_id_by_email", "find_user_id_by_name_zip", "list_all_product_types", "transfer_to_human_agents"}
    for i in pick:
        t = tasks[i]
        end, answers = replay(by_name, fresh, t.actions)
        print("task %d (%s)" % (i, t.user_id))
        for a, ans in zip(t.actions, answers):
            if ans.startswith("Error"):
                print("  action %s %s -> %s" % (a.name, json.dumps(a.kwargs), ans))
        said = " ".join(answers).replace(",", "")
        for o in t.outputs:
            print("  output %r %s" % (o, "is in an answer" if o.replace(",", "") in said else "is in NO answer"))
        for k, a in enumerate(t.actions):
            if a.name in reads:
                continue
            rest = t.actions[:k] + t.actions[k + 1:]
            alt, _ = replay(by_name, fresh, rest)
            if json.dumps(alt, sort_keys=True) == json.dumps(end, sort_keys=True):
                print("  action %d %s %s changes nothing the other actions do not" % (k, a.name, json.dumps(a.kwargs)))
        for coll in ("reservations", "orders"):
            if coll in end:
                changed = sorted(k for k in end[coll] if end[coll][k] != base[coll].get(k))
                if changed:
                    print("  %s changed: %s" % (coll, ", ".join(changed)))


if __name__ == "__main__":
    main()
