"""Dishonest variants of a written suite's scenarios, each proved by `suitegen prove`.

    SG=bin/suitegen python3 pkg/prove/testdata/adversary/variants.py CONTRACT_DIR SUITE_DIR OUT_DIR

SUITE_DIR is a suite `suitegen run` wrote (scenarios/*/scenario.json and
catalogue.json); each variant is written to OUT_DIR and proved one at a time
against CONTRACT_DIR. Printed per kind: how many of those made were kept, the
names of up to 40 kept, and the gate/code that refused the rest.

Kinds, made from conversations of one request that are not outbound calls:
  stated-value-swapped  a success whose act sends a value the caller states in
                        quotes: that value replaced, in the act and its checks, by
                        another the same tool sends in another scenario
  choice-unstated       the same success with the builtin's "If asked, they
                        want: ..." sentence dropped from the instruction
  identity-skipped      a success with its find_*/verify* calls and its
                        identification checks dropped
  rule-relabelled       a refusal that names another of the contract's rules
  escalate-needless     a success turned into a hand-over to the contract's
                        first ends_conversation tool, its act the wrong move

The kinds read the builtin writer's wording and tool names; they are a probe
for this repository's gates, not a general adversary. SG defaults to
bin/suitegen.
"""
import copy
import glob
import json
import os
import re
import subprocess
import sys

import yaml


def main():
    contract, suite, out = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(out, exist_ok=True)
    scs = [json.load(open(f)) for f in sorted(glob.glob(suite + '/scenarios/*/scenario.json'))]
    c = yaml.safe_load(open(contract + '/contract.yaml'))
    rule_ids = [r['id'] for r in c.get('rules', [])]
    muts = []

    def add(kind, sc):
        sc = copy.deepcopy(sc)
        sc['name'] = sc['name'] + '-' + kind
        sc['branch'] += ' (' + kind + ')'
        muts.append((kind, sc))

    for sc in scs:
        if sc.get('then') or sc.get('outbound'):
            continue
        sol = sc.get('solution') or []
        if sc['expects'] == 'succeed':
            act = sol[-1]
            for k, v in act['args'].items():
                if not (isinstance(v, str) and len(v) > 3 and ('"%s"' % v) in sc['instruction']):
                    continue
                others = sorted({a['args'].get(k) for s2 in scs for a in (s2.get('solution') or [])
                                 if a['tool'] == act['tool'] and isinstance(a['args'].get(k), str)
                                 and a['args'].get(k) != v and a['args'].get(k) not in sc['instruction']})
                if not others:
                    continue
                w = others[0]
                m = copy.deepcopy(sc)
                m['solution'][-1]['args'][k] = w
                for g in m['sub_goals']:
                    for pk, pv in (g.get('params') or {}).items():
                        if pv == v:
                            g['params'][pk] = w
                add('stated-value-swapped', m)
                m = copy.deepcopy(sc)
                m['instruction'] = re.sub(r'If asked, they want:[^.]*\.', '', m['instruction']).strip()
                if m['instruction'] != sc['instruction']:
                    add('choice-unstated', m)
                break
            m = copy.deepcopy(sc)
            m['solution'] = [s for s in sol if not s['tool'].startswith('find_') and not s['tool'].startswith('verify')]
            if len(m['solution']) < len(sol):
                m['sub_goals'] = [g for g in m['sub_goals'] if not g['name'].startswith('identified') and g['name'] != 'requires_kept']
                m['rules'] = []
                add('identity-skipped', m)
        if sc['expects'] == 'refuse' and sc.get('rules'):
            other = [r for r in rule_ids if r not in sc['rules']]
            if other:
                m = copy.deepcopy(sc)
                m['rules'] = [other[len(muts) % len(other)]]
                add('rule-relabelled', m)

    hand = [t for t in c.get('tools', []) if isinstance(t, dict) and t.get('ends_conversation')]
    for sc in scs:
        sol = sc.get('solution') or []
        if sc.get('then') or sc.get('outbound') or sc['expects'] != 'succeed' or not sol or not hand:
            continue
        h = hand[0]
        m = copy.deepcopy(sc)
        m['expects'], m['kind'] = 'escalate', 'edge'
        m['tempting'] = [sol[-1]]
        args = {pn: 'the caller wants this done' for pn in ((h.get('params') or {}).get('properties') or {})}
        m['solution'] = sol[:-1] + [{'tool': h['name'], 'args': args}]
        m['sub_goals'] = [{'name': 'not_called', 'params': {'tool': sol[-1]['tool'], 'args': sol[-1]['args']}}] + \
            [g for g in m['sub_goals'] if g.get('judged')]
        m['rules'], m['outputs'] = [], []
        add('escalate-needless', m)

    res = {}
    for kind, m in muts:
        p = os.path.join(out, m['name'] + '.json')
        json.dump(m, open(p, 'w'), indent=1)
        r = subprocess.run([os.environ.get('SG', 'bin/suitegen'), 'prove', contract, p, '--catalogue', suite + '/catalogue.json'],
                           capture_output=True, text=True)
        kept = r.returncode == 0
        why = '' if kept else (r.stdout.strip().splitlines() or ['?'])[-1][:160]
        res.setdefault(kind, []).append((kept, m['name'], why))
    for kind, rs in res.items():
        print(kind, 'kept %d/%d' % (sum(1 for x in rs if x[0]), len(rs)))
        for x in rs[:40]:
            if x[0]:
                print('   KEPT', x[1])
        codes = {}
        for x in rs:
            if not x[0]:
                mm = re.search(r'\b([a-z-]+/[a-z-]+)\b', x[2])
                key = mm.group(1) if mm else x[2][:60]
                codes[key] = codes.get(key, 0) + 1
        print('   refused by', codes)


if __name__ == '__main__':
    main()
