package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/suitegen/suitegen/internal/seedfile"
)

// row is a seed row, its columns in the schema's order.
type row = seedfile.Row

// tables lists the seed tables in schema order (the order seeds load in).
var tables = []string{
	"users", "payment_methods", "products", "variants", "variant_options",
	"orders", "order_items", "fulfillments", "payment_history",
}

type count struct {
	table string
	rows  int
}

// The published shapes. Unknown fields are errors, so a change upstream is
// noticed instead of silently dropped.
type (
	name struct {
		FirstName string `json:"first_name"`
		LastName  string `json:"last_name"`
	}
	address struct {
		Address1 string `json:"address1"`
		Address2 string `json:"address2"`
		City     string `json:"city"`
		Country  string `json:"country"`
		State    string `json:"state"`
		Zip      string `json:"zip"`
	}
	paymentMethod struct {
		Source   string       `json:"source"`
		Brand    *string      `json:"brand"`
		LastFour *string      `json:"last_four"`
		Balance  *json.Number `json:"balance"`
		ID       string       `json:"id"`
	}
	user struct {
		Name           name            `json:"name"`
		Address        address         `json:"address"`
		Email          string          `json:"email"`
		PaymentMethods json.RawMessage `json:"payment_methods"`
		Orders         []string        `json:"orders"`
	}
	variant struct {
		ItemID    string          `json:"item_id"`
		Options   json.RawMessage `json:"options"`
		Available bool            `json:"available"`
		Price     json.Number     `json:"price"`
	}
	product struct {
		Name      string          `json:"name"`
		ProductID string          `json:"product_id"`
		Variants  json.RawMessage `json:"variants"`
	}
	item struct {
		Name      string          `json:"name"`
		ProductID string          `json:"product_id"`
		ItemID    string          `json:"item_id"`
		Price     json.Number     `json:"price"`
		Options   json.RawMessage `json:"options"`
	}
	fulfillment struct {
		TrackingID []string `json:"tracking_id"`
		ItemIDs    []string `json:"item_ids"`
	}
	payment struct {
		TransactionType string      `json:"transaction_type"`
		Amount          json.Number `json:"amount"`
		PaymentMethodID string      `json:"payment_method_id"`
	}
	order struct {
		OrderID        string        `json:"order_id"`
		UserID         string        `json:"user_id"`
		Address        address       `json:"address"`
		Items          []item        `json:"items"`
		Fulfillments   []fulfillment `json:"fulfillments"`
		Status         string        `json:"status"`
		PaymentHistory []payment     `json:"payment_history"`
		// Present only after the published tools ran; kept so that a
		// changed data set converts too.
		CancelReason            *string      `json:"cancel_reason"`
		ReturnItems             []string     `json:"return_items"`
		ReturnPaymentMethodID   *string      `json:"return_payment_method_id"`
		ExchangeItems           []string     `json:"exchange_items"`
		ExchangeNewItems        []string     `json:"exchange_new_items"`
		ExchangePaymentMethodID *string      `json:"exchange_payment_method_id"`
		ExchangePriceDifference *json.Number `json:"exchange_price_difference"`
	}
)

// option is one name and value of a variant's options, in published order.
type option struct{ name, value string }

// convert reads the published retail domain under src and writes the world
// under out. It returns the rows written per table.
func convert(src, out string) ([]count, error) {
	seed := map[string][]row{}
	data := filepath.Join(src, "data")
	users, pmOwner, err := readUsers(filepath.Join(data, "users.json"), seed)
	if err != nil {
		return nil, err
	}
	options, productOf, err := readProducts(filepath.Join(data, "products.json"), seed)
	if err != nil {
		return nil, err
	}
	if err := readOrders(filepath.Join(data, "orders.json"), users, pmOwner, options, productOf, seed); err != nil {
		return nil, err
	}
	if err := write(out, seed); err != nil {
		return nil, err
	}
	counts := make([]count, len(tables))
	for i, t := range tables {
		counts[i] = count{t, len(seed[t])}
	}
	return counts, nil
}

// members calls fn with each member of a JSON object, in document order.
func members(raw []byte, fn func(key string, val json.RawMessage) error) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return errors.New("not a JSON object")
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		if seen[key] {
			return fmt.Errorf("key %q given twice", key)
		}
		seen[key] = true
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return fmt.Errorf("%q: %w", key, err)
		}
		if err := fn(key, val); err != nil {
			return fmt.Errorf("%q: %w", key, err)
		}
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	if _, err := dec.Token(); err == nil {
		return errors.New("trailing data after the object")
	}
	return nil
}

// strict decodes one value, refusing fields the published shape lacks.
func strict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// readOptions reads a variant's or an item's options, in order; every value
// is a string in the published data.
func readOptions(raw []byte) ([]option, error) {
	var out []option
	err := members(raw, func(k string, v json.RawMessage) error {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return fmt.Errorf("option value is not a string: %s", v)
		}
		out = append(out, option{k, s})
		return nil
	})
	return out, err
}

func readUsers(path string, seed map[string][]row) (map[string]user, map[string]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	users := map[string]user{}
	pmOwner := map[string]string{}
	emails := map[string]string{}
	err = members(raw, func(id string, val json.RawMessage) error {
		var u user
		if err := strict(val, &u); err != nil {
			return err
		}
		if prev, dup := emails[u.Email]; dup {
			return fmt.Errorf("email %s is also %s's", u.Email, prev)
		}
		emails[u.Email] = id
		users[id] = u
		seed["users"] = append(seed["users"], row{
			{"user_id", id}, {"first_name", u.Name.FirstName}, {"last_name", u.Name.LastName},
			{"address1", u.Address.Address1}, {"address2", u.Address.Address2}, {"city", u.Address.City},
			{"country", u.Address.Country}, {"state", u.Address.State}, {"zip", u.Address.Zip},
			{"email", u.Email},
		})
		pos := 0
		err := members(u.PaymentMethods, func(key string, val json.RawMessage) error {
			var pm paymentMethod
			if err := strict(val, &pm); err != nil {
				return err
			}
			if pm.ID != key {
				return fmt.Errorf("payment method listed as %q has id %q", key, pm.ID)
			}
			if prev, dup := pmOwner[key]; dup {
				return fmt.Errorf("payment method %s is also %s's", key, prev)
			}
			pmOwner[key] = id
			seed["payment_methods"] = append(seed["payment_methods"], row{
				{"id", pm.ID}, {"user_id", id}, {"position", pos}, {"source", pm.Source},
				{"brand", pm.Brand}, {"last_four", pm.LastFour}, {"balance", pm.Balance},
			})
			pos++
			return nil
		})
		if err != nil {
			return fmt.Errorf("payment_methods: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return users, pmOwner, nil
}

func readProducts(path string, seed map[string][]row) (map[string][]option, map[string]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	options := map[string][]option{}
	productOf := map[string]string{}
	pos := 0
	err = members(raw, func(key string, val json.RawMessage) error {
		var p product
		if err := strict(val, &p); err != nil {
			return err
		}
		if p.ProductID != key {
			return fmt.Errorf("product listed as %q has id %q", key, p.ProductID)
		}
		seed["products"] = append(seed["products"], row{{"product_id", key}, {"name", p.Name}, {"position", pos}})
		pos++
		vpos := 0
		return members(p.Variants, func(id string, val json.RawMessage) error {
			var v variant
			if err := strict(val, &v); err != nil {
				return err
			}
			if v.ItemID != id {
				return fmt.Errorf("variant listed as %q has item id %q", id, v.ItemID)
			}
			if prev, dup := productOf[id]; dup {
				return fmt.Errorf("item %s is also a variant of %s", id, prev)
			}
			productOf[id] = key
			opts, err := readOptions(v.Options)
			if err != nil {
				return fmt.Errorf("options: %w", err)
			}
			options[id] = opts
			seed["variants"] = append(seed["variants"], row{
				{"item_id", id}, {"product_id", key}, {"position", vpos}, {"available", v.Available}, {"price", v.Price},
			})
			vpos++
			for i, o := range opts {
				seed["variant_options"] = append(seed["variant_options"], row{
					{"item_id", id}, {"position", i}, {"name", o.name}, {"value", o.value},
				})
			}
			return nil
		})
	})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return options, productOf, nil
}

func readOrders(path string, users map[string]user, pmOwner map[string]string,
	options map[string][]option, productOf map[string]string, seed map[string][]row) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	// An order's position is its place in its owner's list.
	position := map[string]int{}
	owner := map[string]string{}
	ids := make([]string, 0, len(users))
	for id := range users {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		for i, o := range users[id].Orders {
			if prev, dup := owner[o]; dup {
				return fmt.Errorf("users.json: order %s is listed by %s and %s", o, prev, id)
			}
			position[o], owner[o] = i, id
		}
	}
	pmOf := func(user, pm string) error {
		if pmOwner[pm] != user {
			return fmt.Errorf("payment method %s is not one of %s's", pm, user)
		}
		return nil
	}
	jsonList := func(l []string) any {
		if l == nil {
			return nil
		}
		return json.RawMessage(mustJSON(l))
	}
	seen := 0
	err = members(raw, func(key string, val json.RawMessage) error {
		var o order
		if err := strict(val, &o); err != nil {
			return err
		}
		if o.OrderID != key {
			return fmt.Errorf("order listed as %q has id %q", key, o.OrderID)
		}
		switch owner[key] {
		case o.UserID:
		case "":
			return fmt.Errorf("order %s of %s is in no user's list", key, o.UserID)
		default:
			return fmt.Errorf("order %s belongs to %s but %s lists it", key, o.UserID, owner[key])
		}
		seen++
		for _, pm := range []*string{o.ReturnPaymentMethodID, o.ExchangePaymentMethodID} {
			if pm != nil {
				if err := pmOf(o.UserID, *pm); err != nil {
					return err
				}
			}
		}
		var diff any
		if o.ExchangePriceDifference != nil {
			diff = *o.ExchangePriceDifference
		}
		seed["orders"] = append(seed["orders"], row{
			{"order_id", key}, {"user_id", o.UserID}, {"position", position[key]},
			{"address1", o.Address.Address1}, {"address2", o.Address.Address2}, {"city", o.Address.City},
			{"country", o.Address.Country}, {"state", o.Address.State}, {"zip", o.Address.Zip},
			{"status", o.Status}, {"cancel_reason", o.CancelReason},
			{"return_items", jsonList(o.ReturnItems)}, {"return_payment_method_id", o.ReturnPaymentMethodID},
			{"exchange_items", jsonList(o.ExchangeItems)}, {"exchange_new_items", jsonList(o.ExchangeNewItems)},
			{"exchange_payment_method_id", o.ExchangePaymentMethodID}, {"exchange_price_difference", diff},
		})
		for i, it := range o.Items {
			if productOf[it.ItemID] != it.ProductID {
				return fmt.Errorf("item %s is not a variant of product %s", it.ItemID, it.ProductID)
			}
			opts, err := readOptions(it.Options)
			if err != nil {
				return fmt.Errorf("item %s options: %w", it.ItemID, err)
			}
			// The world keeps one copy of a variant's options; an item
			// whose options differ from its variant's would be lost.
			if !slices.Equal(opts, options[it.ItemID]) {
				return fmt.Errorf("item %s has options other than its variant's", it.ItemID)
			}
			seed["order_items"] = append(seed["order_items"], row{
				{"order_id", key}, {"position", i}, {"name", it.Name}, {"product_id", it.ProductID},
				{"item_id", it.ItemID}, {"price", it.Price},
			})
		}
		for i, f := range o.Fulfillments {
			if f.TrackingID == nil || f.ItemIDs == nil {
				return fmt.Errorf("fulfillment %d lacks tracking_id or item_ids", i)
			}
			seed["fulfillments"] = append(seed["fulfillments"], row{
				{"order_id", key}, {"position", i},
				{"tracking_id", jsonList(f.TrackingID)}, {"item_ids", jsonList(f.ItemIDs)},
			})
		}
		for i, p := range o.PaymentHistory {
			if err := pmOf(o.UserID, p.PaymentMethodID); err != nil {
				return err
			}
			seed["payment_history"] = append(seed["payment_history"], row{
				{"order_id", key}, {"position", i}, {"transaction_type", p.TransactionType},
				{"amount", p.Amount}, {"payment_method_id", p.PaymentMethodID},
			})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if seen != len(owner) {
		return fmt.Errorf("users.json lists %d orders, orders.json holds %d", len(owner), seen)
	}
	return nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// write replaces schema.sql and the seed files under out.
func write(out string, seed map[string][]row) error {
	return seedfile.Write(out, schema, tables, seed)
}
