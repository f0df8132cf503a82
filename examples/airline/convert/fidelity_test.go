package main

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/taubench/taubenchtest"
	"github.com/suitegen/suitegen/pkg/testenv"
	"github.com/suitegen/suitegen/pkg/world"
)

func TestMain(m *testing.M) { testenv.Main(m) }

type fcall struct {
	Tool string         `json:"tool"`
	Args map[string]any `json:"args"`
}

type session struct {
	Name  string      `json:"name"`
	Calls []fcall     `json:"calls"`
	Docs  [][2]string `json:"docs"`
}

func c(tool string, args map[string]any) fcall { return fcall{tool, args} }

type obj = map[string]any

func flights(pairs ...string) []any {
	var out []any
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, obj{"flight_number": pairs[i], "date": pairs[i+1]})
	}
	return out
}

func pax(triples ...string) []any {
	var out []any
	for i := 0; i+2 < len(triples); i += 3 {
		out = append(out, obj{"first_name": triples[i], "last_name": triples[i+1], "dob": triples[i+2]})
	}
	return out
}

func pay(pairs ...any) []any {
	var out []any
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, obj{"payment_id": pairs[i], "amount": pairs[i+1]})
	}
	return out
}

func book(user, origin, dest, cabin string, fl []any, p []any, payments []any, total, nonfree int, insurance string) fcall {
	return c("book_reservation", obj{"user_id": user, "origin": origin, "destination": dest, "flight_type": "one_way",
		"cabin": cabin, "flights": fl, "passengers": p, "payment_methods": payments,
		"total_baggages": total, "nonfree_baggages": nonfree, "insurance": insurance})
}

// sessions exercise every tool, its answers and its published error strings,
// each from the published data.
var sessions = []session{
	{"look-ups", []fcall{
		c("get_user_details", obj{"user_id": "mia_li_3668"}),
		c("get_user_details", obj{"user_id": "nobody_0000"}),
		c("get_reservation_details", obj{"reservation_id": "4WQ150"}),
		c("get_reservation_details", obj{"reservation_id": "ZZZZZZ"}),
		c("list_all_airports", obj{}),
		c("think", obj{"thought": "the user is gold"}),
		c("transfer_to_human_agents", obj{"summary": "wants a refund for a flown segment"}),
	}, nil},
	{"searches", []fcall{
		c("search_direct_flight", obj{"origin": "JFK", "destination": "SEA", "date": "2024-05-20"}),
		c("search_direct_flight", obj{"origin": "JFK", "destination": "SEA", "date": "2024-05-01"}),
		c("search_onestop_flight", obj{"origin": "JFK", "destination": "SEA", "date": "2024-05-20"}),
		c("search_onestop_flight", obj{"origin": "LGA", "destination": "SFO", "date": "2024-05-17"}),
		c("search_onestop_flight", obj{"origin": "LGA", "destination": "SFO", "date": "2024-05-05"}),
		c("search_onestop_flight", obj{"origin": "LGA", "destination": "SFO", "date": "2024-05-30"}),
	}, nil},
	{"calculate", []fcall{
		c("calculate", obj{"expression": "2 + 2"}),
		c("calculate", obj{"expression": "(1 + 2) * 3 / 4"}),
		c("calculate", obj{"expression": "10 / 3"}),
		c("calculate", obj{"expression": "2 ** 10"}),
		c("calculate", obj{"expression": "-3 ** 2"}),
		c("calculate", obj{"expression": "7 // 2"}),
		c("calculate", obj{"expression": "7.5 // 2"}),
		c("calculate", obj{"expression": "0.1 + 0.2"}),
		c("calculate", obj{"expression": "123456789.123 * 1000"}),
		c("calculate", obj{"expression": "100000000000000000.0 * 10"}),
		c("calculate", obj{"expression": "0.0001 / 3"}),
		c("calculate", obj{"expression": "1 / 0"}),
		c("calculate", obj{"expression": "1.0 / 0"}),
		c("calculate", obj{"expression": "1 // 0"}),
		c("calculate", obj{"expression": "2 * (3 + 4"}),
		c("calculate", obj{"expression": "1e5"}),
		c("calculate", obj{"expression": "(1) + (2.5)"}),
	}, nil},
	{"book", []fcall{
		book("mia_li_3668", "JFK", "SEA", "economy", flights("HAT136", "2024-05-20", "HAT039", "2024-05-20"),
			pax("Mia", "Li", "1990-04-05"), pay("certificate_7504069", 250, "credit_card_4421486", 5), 3, 0, "no"),
		book("mia_li_3668", "PHL", "LGA", "business", flights("HAT001", "2024-05-16"),
			pax("Mia", "Li", "1990-04-05", "Amelia", "Ahmed", "1957-03-21"), pay("credit_card_1955700", 1052), 2, 1, "yes"),
		book("mia_li_3668", "PHL", "LGA", "basic_economy", flights("HAT001", "2024-05-16"),
			pax("Mia", "Li", "1990-04-05"), pay("credit_card_1955700", 100.5), 0, 0, "no"),
		book("nobody_0000", "PHL", "LGA", "economy", flights("HAT001", "2024-05-16"), pax("A", "B", "2000-01-01"), pay("x", 1), 0, 0, "no"),
		book("mia_li_3668", "PHL", "LGA", "economy", flights("HAT999", "2024-05-16"), pax("A", "B", "2000-01-01"), pay("x", 1), 0, 0, "no"),
		book("mia_li_3668", "PHL", "LGA", "economy", flights("HAT001", "2024-06-01"), pax("A", "B", "2000-01-01"), pay("x", 1), 0, 0, "no"),
		book("mia_li_3668", "PHL", "LGA", "economy", flights("HAT001", "2024-05-01"), pax("A", "B", "2000-01-01"), pay("x", 1), 0, 0, "no"),
		book("mia_li_3668", "DFW", "LAX", "business", flights("HAT170", "2024-05-22"), pax("A", "B", "2000-01-01"), pay("x", 1), 0, 0, "no"),
		book("mia_li_3668", "PHL", "LGA", "economy", flights("HAT001", "2024-05-16"), pax("A", "B", "2000-01-01"), pay("credit_card_0000000", 122), 0, 0, "no"),
		book("mia_li_3668", "PHL", "LGA", "economy", flights("HAT001", "2024-05-16"), pax("A", "B", "2000-01-01"), pay("certificate_4856383", 122), 0, 0, "no"),
		book("mia_li_3668", "PHL", "LGA", "economy", flights("HAT001", "2024-05-16"), pax("A", "B", "2000-01-01"), pay("certificate_4856383", 100, "credit_card_4421486", 22), 0, 0, "no"),
	}, [][2]string{{"users", "mia_li_3668"}, {"reservations", "HATHAT"}, {"reservations", "HATHAU"}, {"reservations", "HATHAV"}}},
	{"cancel", []fcall{
		c("cancel_reservation", obj{"reservation_id": "4WQ150"}),
		c("cancel_reservation", obj{"reservation_id": "4WQ150"}),
		c("cancel_reservation", obj{"reservation_id": "NOPE00"}),
	}, [][2]string{{"reservations", "4WQ150"}, {"users", "chen_jackson_3290"}}},
	{"baggage", []fcall{
		c("update_reservation_baggages", obj{"reservation_id": "4WQ150", "total_baggages": 7, "nonfree_baggages": 2, "payment_id": "gift_card_3576581"}),
		c("update_reservation_baggages", obj{"reservation_id": "4WQ150", "total_baggages": 12, "nonfree_baggages": 7, "payment_id": "gift_card_3576581"}),
		c("update_reservation_baggages", obj{"reservation_id": "4WQ150", "total_baggages": 1, "nonfree_baggages": 0, "payment_id": "gift_card_3576581"}),
		c("update_reservation_baggages", obj{"reservation_id": "4WQ150", "total_baggages": 1, "nonfree_baggages": 0, "payment_id": "credit_card_0000000"}),
		c("update_reservation_baggages", obj{"reservation_id": "NO6JO3", "total_baggages": 4, "nonfree_baggages": 1, "payment_id": "certificate_4856383"}),
		c("update_reservation_baggages", obj{"reservation_id": "NOPE00", "total_baggages": 1, "nonfree_baggages": 0, "payment_id": "x"}),
	}, [][2]string{{"reservations", "4WQ150"}, {"users", "chen_jackson_3290"}, {"reservations", "NO6JO3"}}},
	{"cabin-up-then-down", []fcall{
		c("update_reservation_flights", obj{"reservation_id": "CDXEBS", "cabin": "business", "payment_id": "credit_card_5865555",
			"flights": flights("HAT114", "2024-05-26", "HAT032", "2024-05-27", "HAT144", "2024-05-29", "HAT066", "2024-05-29")}),
		c("update_reservation_flights", obj{"reservation_id": "CDXEBS", "cabin": "economy", "payment_id": "gift_card_2663401",
			"flights": flights("HAT114", "2024-05-26", "HAT032", "2024-05-27", "HAT144", "2024-05-29", "HAT066", "2024-05-29")}),
	}, [][2]string{{"reservations", "CDXEBS"}, {"users", "harper_garcia_8677"}}},
	{"flights-errors", []fcall{
		c("update_reservation_flights", obj{"reservation_id": "CDXEBS", "cabin": "business", "payment_id": "certificate_6803610",
			"flights": flights("HAT114", "2024-05-26")}),
		c("update_reservation_flights", obj{"reservation_id": "CDXEBS", "cabin": "business", "payment_id": "gift_card_2663401",
			"flights": flights("HAT114", "2024-05-26", "HAT032", "2024-05-27", "HAT144", "2024-05-29", "HAT066", "2024-05-29")}),
		c("update_reservation_flights", obj{"reservation_id": "CDXEBS", "cabin": "economy", "payment_id": "x",
			"flights": flights("HAT114", "2024-05-26")}),
		c("update_reservation_flights", obj{"reservation_id": "CDXEBS", "cabin": "economy", "payment_id": "credit_card_5865555",
			"flights": flights("HAT999", "2024-05-26")}),
		c("update_reservation_flights", obj{"reservation_id": "CDXEBS", "cabin": "economy", "payment_id": "credit_card_5865555",
			"flights": flights("HAT001", "2024-05-02")}),
		c("update_reservation_flights", obj{"reservation_id": "CDXEBS", "cabin": "economy", "payment_id": "credit_card_5865555",
			"flights": flights("HAT001", "2024-06-02")}),
		c("update_reservation_flights", obj{"reservation_id": "NOPE00", "cabin": "economy", "payment_id": "x", "flights": flights()}),
		c("update_reservation_flights", obj{"reservation_id": "CDXEBS", "cabin": "economy", "payment_id": "gift_card_8173468",
			"flights": flights("HAT114", "2024-05-26", "HAT001", "2024-05-20")}),
	}, [][2]string{{"reservations", "CDXEBS"}, {"users", "harper_garcia_8677"}}},
	{"passengers", []fcall{
		c("update_reservation_passengers", obj{"reservation_id": "4WQ150", "passengers": pax("A", "B", "2000-01-01")}),
		c("update_reservation_passengers", obj{"reservation_id": "4WQ150", "passengers": pax("Chen", "Jackson", "1956-07-07", "Ana", "Smith", "1967-04-01", "Fatima", "Martin", "1970-01-20")}),
		c("update_reservation_passengers", obj{"reservation_id": "NOPE00", "passengers": pax("A", "B", "2000-01-01")}),
	}, [][2]string{{"reservations", "4WQ150"}}},
	{"certificates", []fcall{
		c("send_certificate", obj{"user_id": "chen_jackson_3290", "amount": 150}),
		c("send_certificate", obj{"user_id": "chen_jackson_3290", "amount": 50.5}),
		c("send_certificate", obj{"user_id": "chen_jackson_3290", "amount": 100}),
		c("send_certificate", obj{"user_id": "chen_jackson_3290", "amount": 100}),
		c("send_certificate", obj{"user_id": "nobody_0000", "amount": 100}),
	}, [][2]string{{"users", "chen_jackson_3290"}}},
}

// TestFidelity plays the same sessions through the published tools (given a
// checkout of the benchmark in TAU_BENCH_DIR) and through this contract's
// handlers, and requires the same answers, error strings included, and the
// same documents afterwards. Key order inside documents is not compared: the
// benchmark's reward does not see it either.
func TestFidelity(t *testing.T) {
	published := taubenchtest.Play(t, "airline", sessions)
	if len(published) != len(sessions) {
		t.Fatalf("the published tools answered %d sessions of %d", len(published), len(sessions))
	}

	ctx := context.Background()
	ct, err := contract.LoadValid("..")
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.Open(ctx, testenv.Postgres(t), ct)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	render := map[string]string{"users": "get_user_details", "reservations": "get_reservation_details"}
	arg := map[string]string{"users": "user_id", "reservations": "reservation_id"}
	for i, s := range sessions {
		want := published[i]
		err := e.World.Copy(ctx, func(cp *world.Copy) error {
			for j, cl := range s.Calls {
				r := cp.Call(ctx, cl.Tool, cl.Args)
				if msg := compareAnswer(want.Answers[j], r); msg != "" {
					t.Errorf("%s: call %d %s %v: %s", s.Name, j+1, cl.Tool, cl.Args, msg)
				}
			}
			for _, d := range s.Docs {
				r := cp.Call(ctx, render[d[0]], obj{arg[d[0]]: d[1]})
				got := json.RawMessage("null")
				if r.OK {
					got = r.Result
				}
				if !sameJSON(got, want.Docs[d[0]][d[1]]) {
					t.Errorf("%s: %s %s afterwards:\n got %s\nwant %s", s.Name, d[0], d[1], got, want.Docs[d[0]][d[1]])
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// compareAnswer says how the world's answer differs from the published one.
func compareAnswer(want any, r world.CallResult) string {
	switch w := want.(type) {
	case nil:
		if !r.OK || string(r.Result) != "null" {
			return "want no answer, got " + describe(r)
		}
	case string:
		if strings.HasPrefix(w, "Error: ") {
			if !r.Refused || r.Error != w {
				return "want " + w + ", got " + describe(r)
			}
			return ""
		}
		if !r.OK {
			return "want an answer, got " + describe(r)
		}
		if strings.HasPrefix(w, "{") || strings.HasPrefix(w, "[") {
			if !sameJSON(r.Result, json.RawMessage(w)) {
				return "want " + w + ", got " + string(r.Result)
			}
			return ""
		}
		var got string
		if json.Unmarshal(r.Result, &got) != nil || got != w {
			return "want " + w + ", got " + string(r.Result)
		}
	default:
		return "unexpected published answer"
	}
	return ""
}

func describe(r world.CallResult) string {
	if r.OK {
		return string(r.Result)
	}
	return r.Error
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
