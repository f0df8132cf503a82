"""Check a suitegen tau2-bench export against τ²-bench's own domain, with no model.

    python3 tau2_check.py TAU2_DIR DOMAIN EXPORT.json [--json]

An export written with a document map has its "db" in the domain's own
layout and suitegen.final_agent_db; one written without is checked for 1
and 2 only. Using the checkout's own modules (loaded by
tau2_loader), unmodified:

1. db: the export's "db" validates in the domain's DB model and equals the
   domain's own database (collections compared by their documents' ids,
   since τ²-bench appends where the world sorts).
2. load: every task validates as a tau2 Task, and its initial state is set
   by the domain's environment (Environment.set_state runs its update_db
   action, or merges its agent_data, into the domain's database and
   validates the result).
3. replay: the task's gold actions, run through the domain's tools, leave
   the database the export's own replay left (the initial state with the
   task's suitegen.final_agent_db merged over it).
4. reward: τ²-bench's EnvironmentEvaluator gives the DB component 1.0 for a
   trajectory of the gold actions (run through the domain's tools, with
   their answers, then every communicate_info said).
5. nothing: a task judged by DB alone whose gold actions change the
   database scores 0 in τ²-bench for an agent that does nothing (a task
   judged by COMMUNICATE or ACTION too relies on those, which need a model
   or the agent's calls).

Prints one line per failing task and a summary; exits 1 when any check fails.
"""

import copy
import importlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tau2_loader  # noqa: E402


def main(argv):
    as_json = "--json" in argv
    argv = [a for a in argv if a != "--json"]
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    tau2_dir, domain, path = argv[1], argv[2], argv[3]
    tau2_loader.load(tau2_dir)
    envmod = importlib.import_module(f"tau2.domains.{domain}.environment")
    from tau2.data_model.message import AssistantMessage, ToolCall
    from tau2.data_model.tasks import InitializationData, Task
    from tau2.evaluator.evaluator_env import EnvironmentEvaluator
    from tau2.utils.pydantic_utils import update_pydantic_model_with_dict

    with open(path) as f:
        export = json.load(f)
    ext = export.get("suitegen") or {}
    finals = ext.get("final_agent_db")
    if finals is None:
        # Written without a document map: only the db and load checks apply.
        print("the export has no suitegen.final_agent_db (written without a document map): db and load checks only",
              file=sys.stderr)

    def new_env():
        return envmod.get_environment()

    own = new_env().tools.db
    db_cls = type(own)

    def keyed(db):
        """The database as JSON, each top-level list ordered by its documents' first field."""
        d = db.model_dump(mode="json")
        for k, v in d.items():
            if isinstance(v, list) and v and isinstance(v[0], dict):
                first = next(iter(v[0]))
                d[k] = sorted(v, key=lambda doc: str(doc.get(first)))
        return d

    fails = []
    counts = {"tasks": len(export["tasks"]), "load": 0, "replay_same": 0, "gold_reward_1": 0,
              "db_only": 0, "nothing_db_0": 0}
    try:
        exported_db = db_cls.model_validate(export["db"])
        counts["db_validates"] = True
        counts["db_equals_domain"] = keyed(exported_db) == keyed(own)
        if not counts["db_equals_domain"]:
            fails.append(("(db)", "the export's db differs from the domain's own database"))
    except Exception as e:  # the report names it
        counts["db_validates"] = False
        counts["db_equals_domain"] = False
        fails.append(("(db)", f"the export's db does not validate: {e}"))

    for raw in export["tasks"]:
        tid = raw["id"]
        try:
            task = Task.model_validate(raw)
            env = new_env()
            st = task.initial_state
            env.set_state(initialization_data=st.initialization_data if st else None,
                          initialization_actions=st.initialization_actions if st else None, message_history=[])
        except Exception as e:
            fails.append((tid, f"initial state does not load: {type(e).__name__}: {str(e)[:300]}"))
            continue
        counts["load"] += 1
        if finals is None:
            continue
        start = copy.deepcopy(env.tools.db)

        # The gold trajectory, as the domain's tools answer it.
        messages = []
        errors = []
        for i, a in enumerate(task.evaluation_criteria.actions or []):
            tc = ToolCall(id=f"gold-{i}", name=a.name, arguments=a.arguments, requestor=a.requestor)
            messages.append(AssistantMessage(role="assistant", content=None, tool_calls=[tc]))
            tm = env.get_response(tc)
            messages.append(tm)
            if tm.error:
                errors.append(f"{a.name}: {tm.content}")
        if errors:
            fails.append((tid, "gold action answered with an error: " + "; ".join(errors)))
        expected = update_pydantic_model_with_dict(start, finals.get(tid) or {})
        if keyed(env.tools.db) == keyed(expected):
            counts["replay_same"] += 1
        else:
            a, b = keyed(env.tools.db), keyed(expected)
            where = [k for k in a if a[k] != b.get(k)]
            fails.append((tid, f"gold replay leaves another database than the export's replay (in {', '.join(where)})"))

        # τ²-bench's own environment reward of the gold trajectory.
        said = " ".join(task.evaluation_criteria.communicate_info or [])
        if said:
            messages.append(AssistantMessage(role="assistant", content=said))
        reward = EnvironmentEvaluator.calculate_reward(
            environment_constructor=envmod.get_environment, task=task, full_trajectory=messages)
        if reward.db_check is not None and reward.db_check.db_reward == 1.0:
            counts["gold_reward_1"] += 1
        else:
            fails.append((tid, f"gold trajectory scores DB {reward.db_check.db_reward if reward.db_check else None} in τ²-bench"))
        basis = [str(getattr(b, "value", b)) for b in task.evaluation_criteria.reward_basis]
        if basis == ["DB"] and finals.get(tid):
            counts["db_only"] += 1
            nothing = EnvironmentEvaluator.calculate_reward(
                environment_constructor=envmod.get_environment, task=task, full_trajectory=[])
            if nothing.reward == 0.0:
                counts["nothing_db_0"] += 1
            else:
                fails.append((tid, f"doing nothing scores {nothing.reward} in τ²-bench"))

    for tid, why in fails:
        print(f"FAIL {tid}: {why}")
    if as_json:
        print(json.dumps(counts))
    else:
        print(" ".join(f"{k}={v}" for k, v in counts.items()))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
