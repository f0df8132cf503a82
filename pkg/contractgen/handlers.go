package contractgen

import (
	"fmt"
	"strings"
)

// The tools of a contract, one function per kind. Each writes its handler
// line by line and records each argument's truth as it declares it.

func (g *gen) verifyByName() *toolSpec {
	p := g.p
	t := newTool("verify", Reads, nil, g.pick(toolVerbs["verify"]), p.kind.singular)
	t.requires = false
	t.description = fmt.Sprintf("Identify the caller by first name, last name and date of birth. Returns their %s id.", p.kind.singular)
	f := g.argName("first_name", "firstName", "given_name")
	l := g.argName("last_name", "lastName", "surname", "family_name")
	d := g.argName("date_of_birth", "dateOfBirth", "dob", "birth_date")
	dob := param{name: d, typ: "string", desc: "Date of birth, YYYY-MM-DD", required: true}
	if g.chance(0.5) {
		dob.format = "date"
	}
	g.param(t, param{name: f, typ: "string", desc: "The caller's first name", required: true}, argTruth{ref: p.table + "." + p.first})
	g.param(t, param{name: l, typ: "string", desc: "The caller's last name", required: true}, argTruth{ref: p.table + "." + p.last})
	g.param(t, dob, argTruth{ref: p.table + "." + p.birth})
	s := t.star
	s.add("def handle(args, db):")
	s.add("    row = db.one(\"SELECT %s, %s FROM %s WHERE lower(%s) = lower($1) AND lower(%s) = lower($2) AND %s::text = $3\",",
		p.pk, p.status, p.table, p.first, p.last, p.birth)
	s.add("                 args[%q].strip(), args[%q].strip(), args[%q].strip())", f, l, d)
	s.refuseIf(1, "row == None", fmt.Sprintf("%q", "no "+p.kind.singular+" matches that name and date of birth"), "missing")
	s.refuseOn(1, fmt.Sprintf("row[%q] != \"active\"", p.status), fmt.Sprintf("\"this account is %%s; only a person can help\" %% row[%q]", p.status), "status", p.table+"."+p.status)
	s.add("    return row[%q]", p.pk)
	return t
}

func (g *gen) verifyByContact() *toolSpec {
	p := g.p
	t := newTool("verify", Reads, nil, g.pick(toolVerbs["verify2"]), p.kind.singular, g.pick([]string{"contact", "details"}))
	t.requires = false
	t.description = fmt.Sprintf("Identify the caller by the email address and phone number on file. Returns their %s id.", p.kind.singular)
	e := g.argName("email", "emailAddress", "email_address")
	// Some desks ask for only the phone's last four digits: a value no
	// column holds whole.
	ph := g.argName("phone", "phoneNumber", "mobile", "phone_last4", "phoneLastFour")
	last4 := strings.Contains(strings.ToLower(ph), "last")
	ep := param{name: e, typ: "string", desc: "The email address on the account", required: true}
	if g.chance(0.5) {
		ep.format = "email"
	}
	g.param(t, ep, argTruth{ref: p.table + "." + p.email})
	pp := param{name: ph, typ: "string", desc: "The phone number on the account, as the caller says it", required: true}
	if last4 {
		pp.desc, pp.pattern = "The last four digits of the phone number on the account", "^[0-9]{4}$"
	}
	g.param(t, pp, argTruth{ref: p.table + "." + p.phone})
	s := t.star
	s.add("def handle(args, db):")
	s.add("    email = args[%q].strip().lower()", e)
	s.add("    digits = \"\".join([ch for ch in args[%q].elems() if ch.isdigit()])", ph)
	if !last4 {
		s.add("    if len(digits) == 10:")
		s.add("        digits = \"1\" + digits")
	}
	s.add("    row = db.one(\"SELECT %s, %s, %s FROM %s WHERE lower(%s) = $1\", email)", p.pk, p.phone, p.status, p.table, p.email)
	s.refuseIf(1, "row == None", fmt.Sprintf("%q", "no account uses that email address"), "missing")
	if last4 {
		s.refuseOn(1, fmt.Sprintf("len(digits) != 4 or not row[%q].endswith(digits)", p.phone), fmt.Sprintf("%q", "those are not the last four digits of the phone number on the account"), "identity", p.table+"."+p.phone)
	} else {
		s.refuseOn(1, fmt.Sprintf("row[%q] != \"+\" + digits", p.phone), fmt.Sprintf("%q", "the phone number does not match the account"), "identity", p.table+"."+p.phone)
	}
	s.refuseOn(1, fmt.Sprintf("row[%q] != \"active\"", p.status), fmt.Sprintf("\"this account is %%s; only a person can help\" %% row[%q]", p.status), "status", p.table+"."+p.status)
	s.add("    return row[%q]", p.pk)
	return t
}

func (g *gen) personParam(t *toolSpec) string {
	a := g.personArg()
	g.param(t, param{name: a, typ: "string", desc: fmt.Sprintf("The %s id, such as %s", g.p.kind.singular, g.p.rows[0].get(g.p.pk)), required: true},
		argTruth{ref: g.p.table + "." + g.p.pk})
	return a
}

func (g *gen) resourceParam(t *toolSpec, r *resource) string {
	a := g.resourceArg(r)
	g.param(t, param{name: a, typ: "string", desc: fmt.Sprintf("The %s id, such as %s", r.kind.noun, r.rows[0].get(r.pk)), required: true},
		argTruth{ref: r.table + "." + r.pk})
	return a
}

// loadRow reads the record named by arg and refuses when there is none.
func (g *gen) loadRow(s *star, r *resource, arg string) {
	s.add("    row = db.one(%q, args[%q])", r.rowSQL(g.p), arg)
	s.refuseIf(1, "row == None", fmt.Sprintf("\"no %s %%s\" %% args[%q]", r.kind.noun, arg), "missing")
}

func (g *gen) getTool(r *resource) *toolSpec {
	words := []string{g.pick(toolVerbs["get"]), r.kind.noun}
	if g.chance(0.4) {
		words = append(words, "details")
	}
	t := newTool("get", Reads, r, words...)
	t.description = fmt.Sprintf("Look up a %s: its status, %s, amount, dates and credits.", r.kind.noun, r.kindCol)
	owner := g.chance(0.4)
	var pa string
	if owner {
		pa = g.personParam(t)
	}
	ra := g.resourceParam(t, r)
	s := t.star
	s.add("def handle(args, db):")
	g.loadRow(s, r, ra)
	if owner {
		s.refuseOn(1, fmt.Sprintf("row[\"owner_key\"] != args[%q]", pa), fmt.Sprintf("\"%s %%s is not on this account\" %% args[%q]", r.kind.noun, ra), "ownership", r.ownerColumn())
	}
	s.add("    out = {%q: row[%q], \"status\": row[%q], %q: row[%q], \"amount\": row[%q], \"starts\": row[%q], \"ends\": row[%q]}",
		r.kind.noun, r.pk, r.statusCol, r.kindCol, r.kindCol, r.amountCol, r.startsCol, r.endsCol)
	if r.lines != "" {
		s.add("    out[\"lines\"] = db.query(\"SELECT line_no, description, amount FROM %s WHERE %s = $1 ORDER BY line_no\", args[%q])", r.lines, r.lineFK, ra)
	}
	s.add("    out[\"credits\"] = db.query(\"SELECT kind, amount FROM %s WHERE %s = $1 ORDER BY id\", args[%q])", r.events, r.eventFK, ra)
	s.add("    return out")
	return t
}

func (g *gen) listTool(r *resource) *toolSpec {
	t := newTool("list", Reads, r, g.pick(toolVerbs["list"]), strings.ReplaceAll(r.kind.plural, "_", ""))
	t.description = fmt.Sprintf("List the caller's ten most recent %s.", r.kind.plural)
	pa := g.personParam(t)
	s := t.star
	p := g.p
	s.add("def handle(args, db):")
	s.add("    who = db.one(\"SELECT %s FROM %s WHERE %s = $1\", args[%q])", p.pk, p.table, p.pk, pa)
	s.refuseIf(1, "who == None", fmt.Sprintf("\"no %s %%s\" %% args[%q]", p.kind.singular, pa), "missing")
	s.add("    return db.query(%q, args[%q])", r.listSQL(), pa)
	return t
}

func (g *gen) cancelTool(r *resource) *toolSpec {
	t := newTool("cancel", Writes, r, g.pick(toolVerbs["cancel"]), r.kind.noun)
	t.description = fmt.Sprintf("Cancel a %s %s that has not started.", r.statuses[0], r.kind.noun)
	pa := g.personParam(t)
	ra := g.resourceParam(t, r)
	s := t.star
	s.add("def handle(args, db):")
	g.loadRow(s, r, ra)
	s.refuseOn(1, fmt.Sprintf("row[\"owner_key\"] != args[%q]", pa), fmt.Sprintf("\"%s %%s is not on this account\" %% args[%q]", r.kind.noun, ra), "ownership", r.ownerColumn())
	s.refuseOn(1, fmt.Sprintf("row[%q] != %q", r.statusCol, r.statuses[0]),
		fmt.Sprintf("\"%s %%s is %%s; only %s ones can be cancelled\" %% (args[%q], row[%q])", r.kind.noun, r.statuses[0], ra, r.statusCol), "status", r.table+"."+r.statusCol)
	s.refuseOn(1, fmt.Sprintf("row[%q] <= now[:10]", r.startsCol), fmt.Sprintf("\"%s %%s has already started\" %% args[%q]", r.kind.noun, ra), "date", r.table+"."+r.startsCol)
	s.add("    db.execute(\"UPDATE %s SET %s = '%s', %s = $2::timestamptz WHERE %s = $1\", args[%q], now)",
		r.table, r.statusCol, r.statuses[2], r.closedCol, r.pk, ra)
	s.add("    return {%q: args[%q], \"status\": %q}", r.kind.noun, ra, r.statuses[2])
	return t
}

func (g *gen) refundTool(r *resource) *toolSpec {
	t := newTool("refund", Writes, r, g.pick(toolVerbs["refund"]), r.kind.noun)
	t.description = fmt.Sprintf("Credit back part of a %s %s, up to what is left and the caller's %s limit.", r.statuses[1], r.kind.noun, g.tier.noun)
	ra := g.resourceParam(t, r)
	am := g.argName("amount", "credit_amount", "amountUsd")
	g.param(t, param{name: am, typ: "number", desc: "The amount to credit, in dollars", required: true},
		argTruth{ref: Free, also: []string{r.table + "." + r.amountCol, r.events + ".amount"}})
	var reason string
	if g.chance(0.5) {
		reason = g.argName("reason", "why")
		g.param(t, param{name: reason, typ: "string", enum: []string{"overcharged", "service not delivered", "duplicate charge"}, required: true},
			argTruth{ref: Free, also: []string{r.events + ".note"}})
	}
	p := g.p
	s := t.star
	s.add("def handle(args, db):")
	s.add("    amount = args[%q] + 0.0", am)
	g.loadRow(s, r, ra)
	s.refuseOn(1, fmt.Sprintf("row[%q] != %q", r.statusCol, r.statuses[1]),
		fmt.Sprintf("\"only %s %ss can be credited; %%s is %%s\" %% (args[%q], row[%q])", r.statuses[1], r.kind.noun, ra, r.statusCol), "status", r.table+"."+r.statusCol)
	s.refuseIf(1, "amount <= 0", `"the amount must be positive"`, "amount")
	s.add("    done = db.one(\"SELECT coalesce(sum(amount), 0) AS s FROM %s WHERE %s = $1 AND kind = 'refund'\", args[%q])", r.events, r.eventFK, ra)
	s.add("    left = row[%q] - done[\"s\"]", r.amountCol)
	s.refuseIf(1, "amount > left", fmt.Sprintf("\"at most %%s can still be credited on %%s\" %% (left, args[%q])", ra), "amount")
	s.add("    cap = db.one(\"SELECT t.max_credit FROM %s p JOIN %s t ON t.code = p.%s WHERE p.%s = $1\", row[\"owner_key\"])",
		p.table, g.tier.table, p.tier, p.pk)
	s.refuseIf(1, "amount > cap[\"max_credit\"]", fmt.Sprintf("\"the %s allows at most %%s per credit\" %% cap[\"max_credit\"]", g.tier.noun), "limit")
	note := "None"
	if reason != "" {
		note = fmt.Sprintf("args[%q]", reason)
	}
	s.add("    db.execute(\"INSERT INTO %s (%s, kind, amount, note, created_at) VALUES ($1, 'refund', $2, $3, $4::timestamptz)\", args[%q], amount, %s, now)",
		r.events, r.eventFK, ra, note)
	s.add("    return {%q: args[%q], \"credited\": amount, \"left\": left - amount}", r.kind.noun, ra)
	return t
}

func (g *gen) changeTool(r *resource) *toolSpec {
	t := newTool("change", Writes, r, g.pick(toolVerbs["change"]), r.kind.noun, r.kindCol)
	t.description = fmt.Sprintf("Put a %s %s on another %s.", r.statuses[0], r.kind.noun, r.kindCol)
	ra := g.resourceParam(t, r)
	ka := g.argName("new_"+r.kindCol, r.kindCol, camel([]string{"new", r.kindCol}))
	g.param(t, param{name: ka, typ: "string", enum: r.kinds, required: true}, argTruth{ref: Free, also: []string{r.table + "." + r.kindCol}})
	s := t.star
	s.add("def handle(args, db):")
	g.loadRow(s, r, ra)
	s.refuseOn(1, fmt.Sprintf("row[%q] != %q", r.statusCol, r.statuses[0]),
		fmt.Sprintf("\"only %s %ss can be changed; %%s is %%s\" %% (args[%q], row[%q])", r.statuses[0], r.kind.noun, ra, r.statusCol), "status", r.table+"."+r.statusCol)
	s.refuseOn(1, fmt.Sprintf("row[%q] == args[%q]", r.kindCol, ka), fmt.Sprintf("\"%s %%s is already %%s\" %% (args[%q], args[%q])", r.kind.noun, ra, ka), "unchanged", r.table+"."+r.kindCol)
	s.add("    db.execute(\"UPDATE %s SET %s = $2 WHERE %s = $1\", args[%q], args[%q])", r.table, r.kindCol, r.pk, ra, ka)
	s.add("    return {%q: args[%q], %q: args[%q]}", r.kind.noun, ra, r.kindCol, ka)
	return t
}

func (g *gen) addTool(r *resource) *toolSpec {
	t := newTool("add", Writes, r, g.pick(toolVerbs["add"]), r.kind.noun, g.pick([]string{"line", "item", "charge"}))
	t.description = fmt.Sprintf("Add a line to a %s %s; its amount is added to the total.", r.statuses[0], r.kind.noun)
	ra := g.resourceParam(t, r)
	da := g.argName("description", "label", "what")
	am := g.argName("amount", "price", "lineAmount")
	g.param(t, param{name: da, typ: "string", desc: "What the line is for", required: true}, argTruth{ref: Free, also: []string{r.lines + ".description"}})
	g.param(t, param{name: am, typ: "number", desc: "The line's amount in dollars, at most 500", required: true},
		argTruth{ref: Free, also: []string{r.lines + ".amount", r.table + "." + r.amountCol}})
	s := t.star
	s.add("def handle(args, db):")
	s.add("    amount = args[%q] + 0.0", am)
	s.add("    text = args[%q].strip()", da)
	g.loadRow(s, r, ra)
	s.refuseOn(1, fmt.Sprintf("row[%q] != %q", r.statusCol, r.statuses[0]),
		fmt.Sprintf("\"lines can only be added to %s %ss; %%s is %%s\" %% (args[%q], row[%q])", r.statuses[0], r.kind.noun, ra, r.statusCol), "status", r.table+"."+r.statusCol)
	s.refuseIf(1, "amount <= 0 or amount > 500", `"a line's amount must be above 0 and at most 500"`, "amount")
	s.add("    last = db.one(\"SELECT coalesce(max(line_no), 0) AS n FROM %s WHERE %s = $1\", args[%q])", r.lines, r.lineFK, ra)
	s.refuseIf(1, "last[\"n\"] >= 99", fmt.Sprintf("\"%s %%s has no room for another line\" %% args[%q]", r.kind.noun, ra), "limit")
	s.add("    db.execute(\"INSERT INTO %s (%s, line_no, description, amount) VALUES ($1, $2, $3, $4)\", args[%q], last[\"n\"] + 1, text, amount)",
		r.lines, r.lineFK, ra)
	s.add("    db.execute(\"UPDATE %s SET %s = %s + $2 WHERE %s = $1\", args[%q], amount)", r.table, r.amountCol, r.amountCol, r.pk, ra)
	s.add("    return {%q: args[%q], \"line_no\": last[\"n\"] + 1, \"amount\": amount}", r.kind.noun, ra)
	return t
}

func (g *gen) emailTool() *toolSpec {
	p := g.p
	t := newTool("email", Writes, nil, g.pick(toolVerbs["email"]), p.kind.singular, "email")
	t.description = "Change the email address on the caller's account."
	pa := g.personParam(t)
	ea := g.argName("new_email", "newEmail", "email")
	ep := param{name: ea, typ: "string", desc: "The new email address", required: true}
	if g.chance(0.5) {
		ep.format = "email"
	}
	g.param(t, ep, argTruth{ref: p.table + "." + p.email, fresh: true})
	s := t.star
	s.add("def handle(args, db):")
	s.add("    who = db.one(\"SELECT %s, %s, %s FROM %s WHERE %s = $1\", args[%q])", p.pk, p.email, p.status, p.table, p.pk, pa)
	s.refuseIf(1, "who == None", fmt.Sprintf("\"no %s %%s\" %% args[%q]", p.kind.singular, pa), "missing")
	s.refuseOn(1, fmt.Sprintf("who[%q] != \"active\"", p.status), fmt.Sprintf("\"the account is %%s\" %% who[%q]", p.status), "status", p.table+"."+p.status)
	s.add("    target = args[%q].strip().lower()", ea)
	s.refuseIf(1, "\"@\" not in target", `"that is not an email address"`, "format")
	s.refuseIf(1, fmt.Sprintf("target == who[%q]", p.email), `"that is already the account's email address"`, "unchanged")
	s.refuseIf(1, fmt.Sprintf("db.one(\"SELECT %s FROM %s WHERE lower(%s) = $1\", target) != None", p.pk, p.table, p.email), `"another account uses that email address"`, "taken")
	s.add("    db.execute(\"UPDATE %s SET %s = $2 WHERE %s = $1\", args[%q], target)", p.table, p.email, p.pk, pa)
	s.add("    return {%q: args[%q], \"email\": target}", p.pk, pa)
	return t
}

func (g *gen) tierTool() *toolSpec {
	p, ti := g.p, g.tier
	t := newTool("tier", Writes, nil, g.pick(toolVerbs["tier"]), p.kind.singular, ti.noun)
	t.description = fmt.Sprintf("Move the caller's account to a higher %s.", ti.noun)
	pa := g.personParam(t)
	ta := g.argName("new_"+ti.noun, ti.noun, camel([]string{"target", ti.noun}))
	g.param(t, param{name: ta, typ: "string", enum: ti.codes, required: true}, argTruth{ref: ti.table + ".code", also: []string{p.table + "." + p.tier}})
	s := t.star
	s.add("def handle(args, db):")
	s.add("    who = db.one(\"SELECT %s, %s, %s FROM %s WHERE %s = $1\", args[%q])", p.pk, p.status, p.tier, p.table, p.pk, pa)
	s.refuseIf(1, "who == None", fmt.Sprintf("\"no %s %%s\" %% args[%q]", p.kind.singular, pa), "missing")
	s.refuseOn(1, fmt.Sprintf("who[%q] != \"active\"", p.status), fmt.Sprintf("\"the account is %%s\" %% who[%q]", p.status), "status", p.table+"."+p.status)
	s.add("    cur = db.one(\"SELECT rank FROM %s WHERE code = $1\", who[%q])", ti.table, p.tier)
	s.add("    target = db.one(\"SELECT rank FROM %s WHERE code = $1\", args[%q])", ti.table, ta)
	s.refuseOn(1, "target[\"rank\"] <= cur[\"rank\"]", fmt.Sprintf("\"the account is on %%s; only a move up is possible\" %% who[%q]", p.tier), "rank", p.table+"."+p.tier)
	s.add("    db.execute(\"UPDATE %s SET %s = $2 WHERE %s = $1\", args[%q], args[%q])", p.table, p.tier, p.pk, pa, ta)
	s.add("    return {%q: args[%q], %q: args[%q]}", p.pk, pa, ti.noun, ta)
	return t
}

func (g *gen) transferTool() *toolSpec {
	t := newTool("transfer", HandOff, nil, g.pick(toolVerbs["transfer"]), "to", g.pick([]string{"staff", "human", "desk"}))
	t.requires = false
	t.ends = true
	t.description = "Hand the conversation to a person in a department."
	sa := g.argName("summary", "notes", "handoverNote")
	da := g.argName("department", "team", "queue")
	g.param(t, param{name: sa, typ: "string", desc: "What the person taking over needs to know", required: true}, argTruth{ref: Free})
	g.param(t, param{name: da, typ: "string", enum: departments, required: true}, argTruth{ref: Free, also: []string{"staff.department"}})
	t.logOnly = []string{sa}
	s := t.star
	s.add("# The summary is for the person who takes over; the world keeps nothing.")
	s.add("def handle(args, db):")
	s.add("    return \"Transferring the caller to %%s\" %% args[%q]", da)
	return t
}

func (g *gen) endTool() *toolSpec {
	words := [][]string{{"end", "call"}, {"hangup"}, {"close", "conversation"}}[g.r.IntN(3)]
	t := newTool("end", EndsCall, nil, words...)
	t.requires = false
	t.ends = true
	t.description = "End the conversation once the caller has nothing more."
	oa := g.argName("outcome", "disposition")
	g.param(t, param{name: oa, typ: "string", enum: []string{"resolved", "caller left", "nothing to do"}, required: true}, argTruth{ref: Free})
	s := t.star
	s.add("def handle(args, db):")
	s.add("    return \"Call ended: %%s\" %% args[%q]", oa)
	return t
}
