package scenario

import (
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
