package runcmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/suitegen/suitegen/pkg/cli"
	"github.com/suitegen/suitegen/pkg/refresh"
	"github.com/suitegen/suitegen/pkg/run"
)

// Revise is `suitegen revise`: a run over a written suite that replaces the
// chosen scenarios by ones the ask describes.
func Revise() cli.Command {
	return cli.Command{Name: "revise", Args: "OUT --contract DIR (--only NAME,... | --where KEY=VALUE,...) --ask TEXT",
		Summary: "replace chosen scenarios of a written suite by ones the ask describes (" + refresh.AskWords() + ")", Run: cmdRevise}
}

func cmdRevise(ctx context.Context, env *cli.Env, args []string) error {
	f := cli.NewFlags(env, "suitegen revise", "OUT --contract DIR (--only NAME,... | --where KEY=VALUE,...) --ask TEXT [flags]",
		"Replace the chosen scenarios of the suite in OUT, each under its name, by ones the ask describes, written and proved as in any run;\n"+
			"the old versions are kept with the ask in the ledger's history and in OUT/history.jsonl (suitegen history OUT). The builtin\n"+
			"writer understands: harder (one step harder: an adversarial overlay, or a refusal, question or escalation), fresh (another case\n"+
			"of the same kind), answerer (a call the agent places, answered by the next of: the callee, someone else, a voicemail box, a\n"+
			"callee who asks to be called back), noisier (a voice agent's: another case like it, the caller on a worse phone line). An ask\n"+
			"it cannot do is refused before anything is spent; a model (--model) also takes an ask in other words.")
	dir := f.String("contract", "", "the contract directory the suite was written for (required)")
	only := f.String("only", "", "comma-separated names of the scenarios to revise")
	where := f.String("where", "", "revise the scenarios matching every KEY=VALUE, comma-separated; keys: "+strings.Join(refresh.WhereKeys, ", "))
	ask := f.String("ask", "", "what to make of them, in words naming one of: "+refresh.AskWords()+" (required)")
	writers := f.Int("writers", 4, "writers (goroutines, each with its own queue connection)")
	budget := f.Int64("budget-tokens", 0, "stop dispatch once the run spent this many tokens (0: no cap)")
	budgetUSD := f.Float64("budget-usd", 0, "stop dispatch once the run spent this many dollars at the model's price (0: no cap)")
	cn := f.Conn()
	mf := f.Model()
	pos, err := f.Parse(args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) != 1:
		return &cli.UsageError{Msg: "revise takes one suite directory"}
	case *dir == "":
		return &cli.UsageError{Msg: "revise needs --contract DIR"}
	case (*only == "") == (*where == ""):
		return &cli.UsageError{Msg: "revise needs one of --only NAME,... and --where KEY=VALUE,..."}
	case *writers < 1:
		return &cli.UsageError{Msg: fmt.Sprintf("--writers %d: must be at least 1", *writers)}
	}
	rv := run.Revision{Dir: pos[0], Ask: *ask}
	if *only != "" {
		rv.Only = strings.Split(*only, ",")
	} else {
		rv.Where = map[string]string{}
		for _, kv := range strings.Split(*where, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" || v == "" {
				return &cli.UsageError{Msg: fmt.Sprintf("--where %q: want KEY=VALUE", kv)}
			}
			rv.Where[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	dbURL, err := cn.DatabaseURL()
	if err != nil {
		return &cli.UsageError{Msg: err.Error()}
	}
	m, err := mf.Model()
	if err != nil {
		return err
	}
	cfg := run.Config{Queue: cn.Queue(), Dirs: []string{*dir}, Asked: 1, Writers: *writers, Model: m.Name, Provider: m.Provider,
		StateDir: cn.StateDir(), NATSURL: cn.NATS(), DatabaseURL: dbURL, MetricsAddr: cn.MetricsAddr(),
		BudgetTokens: *budget, BudgetUSD: *budgetUSD, Logger: env.Log, Progress: env.Stderr, TTY: env.TTY, Revise: rv}
	if err := cfg.Validate(); err != nil {
		return &cli.UsageError{Msg: err.Error()}
	}
	if _, err := refresh.ParseAsk(*ask, cfg.ModelWrites()); err != nil {
		return &cli.UsageError{Msg: "--ask: " + err.Error()}
	}
	results, err := run.Run(ctx, cfg)
	for _, r := range results {
		if r.Refresh != nil {
			printRefresh(env, r)
		}
	}
	if errors.Is(err, refresh.ErrAsk) {
		return fmt.Errorf("%w; nothing was spent", err)
	}
	return err
}
