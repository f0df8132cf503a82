package scenario

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDecodeStrict(t *testing.T) {
	good := `{"name":"a","use_case":"u","branch":"b","kind":"happy","expects":"succeed","tests":"t","persona":{"name":"N","personality":"","accent":"","style":"","location":"","opening":""},"instruction":"i","solution":[{"tool":"x","args":{"n":3,"f":1.5}}],"sub_goals":[{"name":"s"}],"max_turns":4,"provenance":{"contract_sha256":"","world_sha256":"","model":"","seed":0}}`
	sc, err := Decode([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := sc.Solution[0].Args["n"].(int64); !ok || v != 3 {
		t.Fatalf("integral argument decoded as %T %v, want int64 3", sc.Solution[0].Args["n"], sc.Solution[0].Args["n"])
	}
	if v, ok := sc.Solution[0].Args["f"].(float64); !ok || v != 1.5 {
		t.Fatalf("fractional argument decoded as %T %v", sc.Solution[0].Args["f"], sc.Solution[0].Args["f"])
	}
	for name, doc := range map[string]string{
		"unknown field": strings.Replace(good, `"name":"a"`, `"name":"a","nmae":"b"`, 1),
		"trailing":      good + `{}`,
		"syntax":        "{\n\"name\": }",
		"too large":     `{"name":"` + strings.Repeat("x", MaxSize) + `"}`,
	} {
		if _, err := Decode([]byte(doc)); err == nil {
			t.Errorf("%s: decoded without error", name)
		}
	}
	if _, err := Decode([]byte("{\n\"name\": }")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("syntax error should name line 2, got %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"name":"a","solution":[{"tool":"x","args":{"n":[1,{"k":2.5}]}}]}`))
	f.Add([]byte(`{"setup":[{"sql":"INSERT","args":[1,"a",null,{"x":1}]}],"caller_id":7}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		sc, err := Decode(b)
		if err == nil && sc == nil {
			t.Fatal("nil scenario without error")
		}
	})
}

// TestDecodeOutbound: an outbound call's record keys decode as the world
// expects them, and the phone fields of a persona round-trip.
func TestDecodeOutbound(t *testing.T) {
	doc := `{"name":"a","use_case":"u","branch":"b","kind":"happy","expects":"refuse","tests":"t",
	"persona":{"name":"N","personality":"","accent":"","style":"","location":"","opening":"You've reached Ana","line_quality":"Clear landline","background_noise":"Television on","talks_over":true,"spelling":"Reads numbers digit by digit"},
	"caller_id":"P-1","outbound":{"purpose":"appointments","record":{"appointment_id":"A-1","n":7},"answered_by":"voicemail"},
	"instruction":"i","solution":[],"sub_goals":[{"name":"s"}],"max_turns":4,"provenance":{"contract_sha256":"","world_sha256":"","model":"","seed":0}}`
	sc, err := Decode([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	o := sc.Outbound
	if o == nil || o.Purpose != "appointments" || o.AnsweredBy != Voicemail || o.Record["appointment_id"] != "A-1" {
		t.Fatalf("outbound: %+v", o)
	}
	if v, ok := o.Record["n"].(int64); !ok || v != 7 {
		t.Errorf("integral record key decoded as %T %v, want int64 7", o.Record["n"], o.Record["n"])
	}
	p := sc.Persona
	if p.LineQuality != "Clear landline" || p.BackgroundNoise != "Television on" || !p.TalksOver || p.Spelling != "Reads numbers digit by digit" {
		t.Errorf("persona: %+v", p)
	}
	if _, err := Decode([]byte(strings.Replace(doc, `"answered_by"`, `"answered":"x","answered_by"`, 1))); err == nil {
		t.Error("an unknown field of outbound decoded without error")
	}
}

// encode writes a scenario as suitegen saves it (suite.Encode): 2-space
// indent, HTML characters as they are, a trailing newline.
func encode(t *testing.T, sc *Scenario) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(sc); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestSingleRequestRoundTrip: a scenario without further requests encodes
// as it did before requests could follow (no "then" key; a file saved by
// suitegen comes back byte for byte, a hand-written one once re-encoded),
// and is its own one request.
func TestSingleRequestRoundTrip(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "prove", "testdata", "*", "*.json"))
	more, _ := filepath.Glob(filepath.Join("..", "prove", "testdata", "adversary", "*", "*.json"))
	files = append(files, more...)
	n, saved := 0, 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := Decode(b)
		if err != nil || len(sc.Then) > 0 {
			continue // not a scenario, or one with further requests
		}
		n++
		once := encode(t, sc)
		if bytes.Equal(once, b) {
			saved++
		}
		again, err := Decode(once)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(encode(t, again), once) || bytes.Contains(once, []byte(`"then"`)) {
			t.Errorf("%s: does not round-trip", f)
		}
		if rs := sc.Requests(); len(rs) != 1 || !bytes.Equal(encode(t, rs[0]), once) {
			t.Errorf("%s: is not its own one request", f)
		}
	}
	if n < 50 || saved == 0 {
		t.Fatalf("%d scenario files round-tripped, %d of them byte for byte", n, saved)
	}
}

// TestRequests: further requests decode strictly, with numbers as the
// world expects them, and each is a single-request view of the whole.
func TestRequests(t *testing.T) {
	doc := `{"name":"a","use_case":"u1","branch":"b","kind":"happy","expects":"succeed","tests":"t1",
	"persona":{"name":"N","personality":"","accent":"","style":"","location":"","opening":"o"},
	"instruction":"i","setup":[{"sql":"INSERT","args":[1]}],"solution":[{"tool":"x","args":{"n":1}}],"sub_goals":[{"name":"s"}],
	"then":[{"use_case":"u2","expects":"refuse","tests":"t2","solution":[],"tempting":[{"tool":"y","args":{"n":2}}],"sub_goals":[{"name":"g","params":{"n":3}}],"rules":["r"]}],
	"max_turns":4,"provenance":{"contract_sha256":"","world_sha256":"","model":"","seed":0}}`
	sc, err := Decode([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	rs := sc.Requests()
	if len(rs) != 2 {
		t.Fatalf("%d requests, want 2", len(rs))
	}
	one, two := rs[0], rs[1]
	if one.UseCase != "u1" || len(one.Then) != 0 || one.Solution[0].Tool != "x" {
		t.Errorf("request 1: %+v", one)
	}
	if two.UseCase != "u2" || two.Expects != "refuse" || two.Tests != "t2" || two.Branch != "b" || len(two.Solution) != 0 || two.Rules[0] != "r" {
		t.Errorf("request 2: %+v", two)
	}
	if two.Instruction != "i" || two.Persona.Opening != "o" || len(two.Setup) != 1 || two.MaxTurns != 4 || len(two.Then) != 0 {
		t.Errorf("request 2 does not share the conversation: %+v", two)
	}
	if v, ok := two.Tempting[0].Args["n"].(int64); !ok || v != 2 {
		t.Errorf("a further request's argument decoded as %T", two.Tempting[0].Args["n"])
	}
	if v, ok := two.SubGoals[0].Params["n"].(int64); !ok || v != 3 {
		t.Errorf("a further request's sub-goal param decoded as %T", two.SubGoals[0].Params["n"])
	}
	if _, err := Decode([]byte(strings.Replace(doc, `"use_case":"u2"`, `"use_case":"u2","caller_id":"x"`, 1))); err == nil {
		t.Error("a field of the conversation inside a further request decoded without error")
	}
	var back Scenario
	if err := json.Unmarshal(encode(t, sc), &back); err != nil || len(back.Then) != 1 {
		t.Errorf("then does not survive encoding: %v %+v", err, back.Then)
	}
}
