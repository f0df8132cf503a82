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

type obj = map[string]any

func c(tool string, args obj) fcall { return fcall{tool, args} }

func ids(s ...string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

func items(tool, order string, old, new []any, pm string) fcall {
	return c(tool, obj{"order_id": order, "item_ids": old, "new_item_ids": new, "payment_method_id": pm})
}

func ret(order string, old []any, pm string) fcall {
	return c("return_delivered_order_items", obj{"order_id": order, "item_ids": old, "payment_method_id": pm})
}

func pay(order, pm string) fcall {
	return c("modify_pending_order_payment", obj{"order_id": order, "payment_method_id": pm})
}

func moveTo(key, id string) fcall {
	tool := "modify_pending_order_address"
	if key == "user_id" {
		tool = "modify_user_address"
	}
	return c(tool, obj{key: id, "address1": "418 Alder Street", "address2": "", "city": "Portland",
		"state": "OR", "country": "USA", "zip": "97214"})
}

const (
	modify   = "modify_pending_order_items"
	exchange = "exchange_delivered_order_items"
)

// sessions exercise every tool, its answers and its published error strings,
// each from the published data.
var sessions = []session{
	{"look-ups", []fcall{
		c("find_user_id_by_email", obj{"email": "noah.brown7922@example.com"}),
		c("find_user_id_by_email", obj{"email": "NOAH.Brown7922@Example.com"}),
		c("find_user_id_by_email", obj{"email": "noah.brown@example.com"}),
		c("find_user_id_by_name_zip", obj{"first_name": "noah", "last_name": "BROWN", "zip": "80279"}),
		c("find_user_id_by_name_zip", obj{"first_name": "Noah", "last_name": "Brown", "zip": "80280"}),
		c("get_user_details", obj{"user_id": "noah_brown_6181"}),
		c("get_user_details", obj{"user_id": "isabella_lopez_6490"}),
		c("get_user_details", obj{"user_id": "nobody_0000"}),
		c("get_order_details", obj{"order_id": "#W2611340"}),
		c("get_order_details", obj{"order_id": "#W3220387"}),
		c("get_order_details", obj{"order_id": "#9502126"}),
		c("get_product_details", obj{"product_id": "9523456873"}),
		c("get_product_details", obj{"product_id": "6086499569"}),
		c("list_all_product_types", obj{}),
		c("think", obj{"thought": "the order is pending"}),
		c("transfer_to_human_agents", obj{"summary": "wants to change a processed order"}),
		c("calculate", obj{"expression": "3131.1 + 4777.75 + 367.38"}),
		c("calculate", obj{"expression": "2623.69 - 1126.04"}),
		c("calculate", obj{"expression": "(1 + 2) * 3 / 4"}),
		c("calculate", obj{"expression": "1 / 0"}),
		c("calculate", obj{"expression": "abs(-1)"}),
	}, nil},
	{"cancel", []fcall{
		c("cancel_pending_order", obj{"order_id": "#W6779827", "reason": "no longer needed"}),
		c("cancel_pending_order", obj{"order_id": "#W6779827", "reason": "ordered by mistake"}),
		c("cancel_pending_order", obj{"order_id": "#W2611340", "reason": "no longer needed"}),
		c("cancel_pending_order", obj{"order_id": "#W0000000", "reason": "no longer needed"}),
		c("cancel_pending_order", obj{"order_id": "#W6426438", "reason": "ordered by mistake"}),
	}, [][2]string{{"users", "ethan_lopez_6291"}, {"orders", "#W6779827"}, {"orders", "#W6426438"}}},
	{"payment", []fcall{
		pay("#W4923227", "gift_card_8245350"),
		pay("#W4923227", "credit_card_8554680"),
		pay("#W4923227", "gift_card_7219486"),
		pay("#W4923227", "paypal_1621947"),
		pay("#W4923227", "credit_card_8897086"),
		pay("#W2611340", "gift_card_1725971"),
		pay("#W0000000", "paypal_1621947"),
	}, [][2]string{{"users", "isabella_lopez_6490"}, {"orders", "#W4923227"}}},
	{"payment-from-a-gift-card", []fcall{
		pay("#W8073920", "credit_card_9789590"),
		pay("#W9300146", "gift_card_7245904"),
	}, [][2]string{{"users", "ethan_lopez_6291"}, {"orders", "#W8073920"}}},
	{"modify-items", []fcall{
		items(modify, "#W4923227", ids("7751905257"), ids("5967152432"), "gift_card_8245350"),
		items(modify, "#W4923227", ids("1111111111"), ids("9440686670"), "gift_card_8245350"),
		items(modify, "#W4923227", ids("7751905257", "7751905257"), ids("9440686670", "9440686670"), "gift_card_8245350"),
		items(modify, "#W4923227", ids("7751905257"), ids(), "gift_card_8245350"),
		items(modify, "#W4923227", ids("7751905257"), ids("9799386954"), "gift_card_8245350"),
		items(modify, "#W4923227", ids("7751905257"), ids("9440686670"), "gift_card_7219486"),
		items(modify, "#W4923227", ids("7751905257"), ids("9440686670"), "gift_card_8245350"),
		items(modify, "#W4923227", ids("9440686670"), ids("4716977452"), "gift_card_8245350"),
		c("cancel_pending_order", obj{"order_id": "#W4923227", "reason": "no longer needed"}),
		moveTo("order_id", "#W4923227"),
		pay("#W4923227", "paypal_1621947"),
		items(modify, "#W2611340", ids("6469567736"), ids("6469567736"), "gift_card_1725971"),
		items(modify, "#W0000000", ids(), ids(), "x"),
	}, [][2]string{{"users", "isabella_lopez_6490"}, {"orders", "#W4923227"}}},
	{"modify-items-gift-card-short", []fcall{
		items(modify, "#W6426438", ids("8886009523"), ids("4510078629"), "gift_card_7219486"),
		items(modify, "#W6426438", ids("8886009523", "2177997696"), ids("4510078629", "6843647669"), "credit_card_9789590"),
	}, [][2]string{{"users", "ethan_lopez_6291"}, {"orders", "#W6426438"}}},
	{"modify-items-duplicates", []fcall{
		items(modify, "#W7208030", ids("5753502325", "5753502325"), ids("8481719475", "9829827210"), "credit_card_5809636"),
		items(modify, "#W9093821", ids("3557711149", "3557711149", "3557711149"), ids("3928046918", "3928046918", "3928046918"), "credit_card_7422485"),
		items(modify, "#W9093821", ids("3557711149", "3557711149"), ids("3557711149", "7251508981"), "credit_card_7422485"),
		items(modify, "#W9300146", ids("9190635437"), ids("9190635437"), "gift_card_7245904"),
	}, [][2]string{{"orders", "#W7208030"}, {"orders", "#W9093821"}, {"orders", "#W9300146"}, {"users", "aarav_anderson_8794"}}},
	{"addresses", []fcall{
		moveTo("order_id", "#W6426438"),
		moveTo("order_id", "#W2611340"),
		moveTo("order_id", "#W0000000"),
		moveTo("user_id", "noah_brown_6181"),
		moveTo("user_id", "nobody_0000"),
	}, [][2]string{{"orders", "#W6426438"}, {"users", "noah_brown_6181"}}},
	{"return", []fcall{
		ret("#W4817420", ids("6777246137", "4900661478"), "gift_card_8168843"),
		ret("#W4817420", ids("6777246137"), "gift_card_8168843"),
		ret("#W1840144", ids("8590708195", "8590708195"), "credit_card_3240550"),
		ret("#W1840144", ids("8590708195", "8590708195", "8590708195"), "paypal_2306935"),
		ret("#W1840144", ids("8590708195"), "gift_card_8168843"),
		ret("#W1840144", ids("8590708195", "8384507844", "8590708195"), "paypal_2306935"),
		ret("#W2273069", ids("8590708195"), "paypal_2306935"),
		ret("#W0000000", ids("8590708195"), "paypal_2306935"),
	}, [][2]string{{"users", "ava_moore_2033"}, {"orders", "#W4817420"}, {"orders", "#W1840144"}}},
	{"exchange", []fcall{
		items(exchange, "#W2842410", ids("9799386954", "9799386954"), ids("1199058591"), "paypal_4751854"),
		items(exchange, "#W2842410", ids("9799386954", "9799386954"), ids("6574183535", "1199058591"), "paypal_4751854"),
		items(exchange, "#W2842410", ids("9799386954", "9799386954", "9799386954"), ids("1199058591", "1199058591", "1199058591"), "paypal_4751854"),
		items(exchange, "#W2842410", ids("9799386954"), ids("1199058591"), "credit_card_3240550"),
		items(exchange, "#W2842410", ids("9799386954", "7729002517"), ids("7579176349", "3360679910"), "paypal_4751854"),
		items(exchange, "#W2842410", ids("9799386954"), ids("1199058591"), "paypal_4751854"),
		items(exchange, "#W2273069", ids("8590708195"), ids("9385662952"), "paypal_2306935"),
		items(exchange, "#W4817420", ids("4900661478"), ids("4894369688"), "gift_card_8168843"),
		items(exchange, "#W4817420", ids("4900661478", "6777246137"), ids("4894369688", "4579334072"), "gift_card_8168843"),
		items(exchange, "#W4316152", ids("7292993796"), ids("4238115171"), "gift_card_7245904"),
		ret("#W4316152", ids("7292993796"), "gift_card_7245904"),
		items(exchange, "#W0000000", ids(), ids(), "x"),
	}, [][2]string{{"orders", "#W2842410"}, {"orders", "#W4817420"}, {"orders", "#W4316152"}, {"users", "aarav_anderson_8794"}}},
}

// TestFidelity plays the same sessions through the published tools (given a
// checkout of the benchmark in TAU_BENCH_DIR) and through this contract's
// handlers, and requires the same answers, error strings included, and the
// same documents afterwards. Key order inside documents is not compared: the
// benchmark's reward does not see it either.
func TestFidelity(t *testing.T) {
	published := taubenchtest.Play(t, "retail", sessions)
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
	render := map[string]string{"users": "get_user_details", "orders": "get_order_details", "products": "get_product_details"}
	arg := map[string]string{"users": "user_id", "orders": "order_id", "products": "product_id"}
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
// The published tools answer JSON documents as text; the world answers the
// values themselves.
func compareAnswer(want any, r world.CallResult) string {
	w, ok := want.(string)
	if !ok {
		return "unexpected published answer"
	}
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
	return ""
}

func describe(r world.CallResult) string {
	if r.OK {
		return string(r.Result)
	}
	return r.Error
}

// sameJSON compares two documents as values: numbers by value, so 55 and
// 55.0 are the same (Python prints a whole float with ".0").
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
