package plan

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// Crash is a place in a contract's handler code that crashed on a call the
// plan rehearsed with arguments the tool's params accept: a handler should
// refuse what it cannot do, and a crash there hides the branch behind it.
// The plan reports it rather than planning around it in silence.
type Crash struct {
	Tool string `json:"tool"`
	// At is the handler's file, line and column; Reason what it said.
	At     string `json:"at"`
	Reason string `json:"reason"`
	// Calls is how many different rehearsals (setup and call) crashed
	// there; Args the arguments of one of them (the first in JSON order, so
	// that a plan says the same each time) and Setup the statements the
	// plan ran before it, none when it crashed on the world as seeded.
	Calls int                  `json:"calls"`
	Args  map[string]any       `json:"args,omitempty"`
	Setup []scenario.Statement `json:"setup,omitempty"`
}

// crashAt reads a crash reason that starts at a place in a script
// ("tools/pay.star:10:12: ..."). Crashes with no place (a tool with no
// handler, a limit reached, the database gone) are not the code's and are
// left to the gates that see them.
var crashAt = regexp.MustCompile(`^([^\s:]+\.star:\d+:\d+): (.*)$`)

// crashLog gathers the crashes a contract's rehearsals meet, across every
// Derive of it in a process (the lessons keep it with the grounding and
// solutions, which spare later Derives the rehearsals that met them).
type crashLog struct {
	mu sync.Mutex
	at map[string]*crashSeen // tool and place -> what crashed there
}

type crashSeen struct {
	crash Crash
	calls map[string]bool // each crashed call as JSON
	first string
}

// note records the crashes among a rehearsal's answers.
func (l *crashLog) note(setup []scenario.Statement, calls []scenario.Call, ans []ground.Answer) {
	for i, a := range ans {
		if !a.Crash || i >= len(calls) {
			continue
		}
		m := crashAt.FindStringSubmatch(strings.TrimPrefix(a.Error, "Crash: "))
		if m == nil {
			continue
		}
		b, err := json.Marshal(calls[i].Args)
		if err != nil {
			continue
		}
		call := string(b)
		if len(setup) > 0 {
			sb, err := json.Marshal(setup)
			if err != nil {
				continue
			}
			call += string(sb)
		}
		l.mu.Lock()
		if l.at == nil {
			l.at = map[string]*crashSeen{}
		}
		key := calls[i].Tool + "\x00" + m[1]
		s := l.at[key]
		if s == nil {
			s = &crashSeen{crash: Crash{Tool: calls[i].Tool, At: m[1]}, calls: map[string]bool{}}
			l.at[key] = s
		}
		if !s.calls[call] {
			s.calls[call] = true
			if s.first == "" || call < s.first {
				var args map[string]any // a copy: the caller's map may change
				_ = json.Unmarshal(b, &args)
				s.first, s.crash.Reason, s.crash.Args, s.crash.Setup = call, m[2], args, slices.Clone(setup)
			}
		}
		l.mu.Unlock()
	}
}

// list is every place that crashed, by tool and place.
func (l *crashLog) list() []Crash {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Crash, 0, len(l.at))
	for _, s := range l.at {
		c := s.crash
		c.Calls = len(s.calls)
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Crash) int {
		return strings.Compare(a.Tool+"\x00"+a.At, b.Tool+"\x00"+b.At)
	})
	return out
}
