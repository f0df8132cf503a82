package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/suitegen/suitegen/internal/seedfile"
)

// row and field are the seed's rows and columns, in the schema's order.
type (
	row   = seedfile.Row
	field = seedfile.Field
)

// tables lists the seed tables in schema order (the order seeds load in).
var tables = []string{
	"users", "payment_methods", "saved_passengers", "airports", "flights", "flight_dates",
	"reservations", "reservation_flights", "reservation_passengers", "payment_history",
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
		Amount   *json.Number `json:"amount"`
		ID       string       `json:"id"`
	}
	passenger struct {
		FirstName string `json:"first_name"`
		LastName  string `json:"last_name"`
		DOB       string `json:"dob"`
	}
	user struct {
		Name            name            `json:"name"`
		Address         address         `json:"address"`
		Email           string          `json:"email"`
		DOB             string          `json:"dob"`
		PaymentMethods  json.RawMessage `json:"payment_methods"`
		SavedPassengers []passenger     `json:"saved_passengers"`
		Membership      string          `json:"membership"`
		Reservations    []string        `json:"reservations"`
	}
	segment struct {
		Origin       string      `json:"origin"`
		Destination  string      `json:"destination"`
		FlightNumber string      `json:"flight_number"`
		Date         string      `json:"date"`
		Price        json.Number `json:"price"`
	}
	payment struct {
		PaymentID string      `json:"payment_id"`
		Amount    json.Number `json:"amount"`
	}
	reservation struct {
		ReservationID   string      `json:"reservation_id"`
		UserID          string      `json:"user_id"`
		Origin          string      `json:"origin"`
		Destination     string      `json:"destination"`
		FlightType      string      `json:"flight_type"`
		Cabin           string      `json:"cabin"`
		Flights         []segment   `json:"flights"`
		Passengers      []passenger `json:"passengers"`
		PaymentHistory  []payment   `json:"payment_history"`
		CreatedAt       string      `json:"created_at"`
		TotalBaggages   json.Number `json:"total_baggages"`
		NonfreeBaggages json.Number `json:"nonfree_baggages"`
		Insurance       string      `json:"insurance"`
		Status          *string     `json:"status"`
	}
	cabins struct {
		BasicEconomy json.Number `json:"basic_economy"`
		Economy      json.Number `json:"economy"`
		Business     json.Number `json:"business"`
	}
	flightDate struct {
		Status                    string  `json:"status"`
		AvailableSeats            *cabins `json:"available_seats"`
		Prices                    *cabins `json:"prices"`
		ActualDepartureTimeEst    *string `json:"actual_departure_time_est"`
		ActualArrivalTimeEst      *string `json:"actual_arrival_time_est"`
		EstimatedDepartureTimeEst *string `json:"estimated_departure_time_est"`
		EstimatedArrivalTimeEst   *string `json:"estimated_arrival_time_est"`
	}
	flight struct {
		FlightNumber              string          `json:"flight_number"`
		Origin                    string          `json:"origin"`
		Destination               string          `json:"destination"`
		ScheduledDepartureTimeEst string          `json:"scheduled_departure_time_est"`
		ScheduledArrivalTimeEst   string          `json:"scheduled_arrival_time_est"`
		Dates                     json.RawMessage `json:"dates"`
	}
)

// convert reads the published airline domain under src and writes the world
// under out. It returns the rows written per table.
func convert(src, out string) ([]count, error) {
	seed := map[string][]row{}
	airports, err := readAirports(filepath.Join(src, "tools", "list_all_airports.py"))
	if err != nil {
		return nil, err
	}
	for i, a := range airports {
		seed["airports"] = append(seed["airports"], row{{"iata", a[0]}, {"city", a[1]}, {"position", i}})
	}
	users, err := readUsers(filepath.Join(src, "data", "users.json"), seed)
	if err != nil {
		return nil, err
	}
	if err := readFlights(filepath.Join(src, "data", "flights.json"), seed); err != nil {
		return nil, err
	}
	if err := readReservations(filepath.Join(src, "data", "reservations.json"), users, seed); err != nil {
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

// quoted matches one Python string literal in a list.
var quoted = regexp.MustCompile(`"([^"\\]*)"`)

// readAirports takes the two parallel lists (airport codes and their cities)
// out of list_all_airports.py: the tool's answer is the only place the
// published domain names its airports.
func readAirports(path string) ([][2]string, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	list := func(name string) ([]string, error) {
		m := regexp.MustCompile(`(?s)\b` + name + `\s*=\s*\[(.*?)\]`).FindSubmatch(src)
		if m == nil {
			return nil, fmt.Errorf("%s: no list %q", path, name)
		}
		var out []string
		for _, q := range quoted.FindAllSubmatch(m[1], -1) {
			out = append(out, string(q[1]))
		}
		return out, nil
	}
	codes, err := list("airports")
	if err != nil {
		return nil, err
	}
	cities, err := list("cities")
	if err != nil {
		return nil, err
	}
	if len(codes) == 0 || len(codes) != len(cities) {
		return nil, fmt.Errorf("%s: %d airports but %d cities", path, len(codes), len(cities))
	}
	out := make([][2]string, len(codes))
	for i := range codes {
		out[i] = [2]string{codes[i], cities[i]}
	}
	return out, nil
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
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
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

func readUsers(path string, seed map[string][]row) (map[string]user, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	users := map[string]user{}
	err = members(raw, func(id string, val json.RawMessage) error {
		var u user
		if err := strict(val, &u); err != nil {
			return err
		}
		users[id] = u
		seed["users"] = append(seed["users"], row{
			{"user_id", id}, {"first_name", u.Name.FirstName}, {"last_name", u.Name.LastName},
			{"address1", u.Address.Address1}, {"address2", u.Address.Address2}, {"city", u.Address.City},
			{"country", u.Address.Country}, {"state", u.Address.State}, {"zip", u.Address.Zip},
			{"email", u.Email}, {"dob", u.DOB}, {"membership", u.Membership},
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
			seed["payment_methods"] = append(seed["payment_methods"], row{
				{"user_id", id}, {"id", pm.ID}, {"position", pos}, {"source", pm.Source},
				{"brand", pm.Brand}, {"last_four", pm.LastFour}, {"amount", pm.Amount},
			})
			pos++
			return nil
		})
		if err != nil {
			return fmt.Errorf("payment_methods: %w", err)
		}
		for i, p := range u.SavedPassengers {
			seed["saved_passengers"] = append(seed["saved_passengers"], row{
				{"user_id", id}, {"position", i}, {"first_name", p.FirstName}, {"last_name", p.LastName}, {"dob", p.DOB},
			})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return users, nil
}

func readFlights(path string, seed map[string][]row) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	last := ""
	err = members(raw, func(key string, val json.RawMessage) error {
		var f flight
		if err := strict(val, &f); err != nil {
			return err
		}
		if f.FlightNumber != key {
			return fmt.Errorf("flight listed as %q has number %q", key, f.FlightNumber)
		}
		// The search tools list flights in the published order; the world
		// lists them by flight number, so the two must agree.
		if key <= last {
			return fmt.Errorf("flights are not in flight-number order (%s after %s)", key, last)
		}
		last = key
		seed["flights"] = append(seed["flights"], row{
			{"flight_number", f.FlightNumber}, {"origin", f.Origin}, {"destination", f.Destination},
			{"scheduled_departure_time_est", f.ScheduledDepartureTimeEst},
			{"scheduled_arrival_time_est", f.ScheduledArrivalTimeEst},
		})
		lastDate := ""
		return members(f.Dates, func(date string, val json.RawMessage) error {
			var d flightDate
			if err := strict(val, &d); err != nil {
				return err
			}
			if date <= lastDate {
				return fmt.Errorf("dates are not in order (%s after %s)", date, lastDate)
			}
			lastDate = date
			r := row{{"flight_number", key}, {"date", date}, {"status", d.Status}}
			if s := d.AvailableSeats; s != nil {
				r = append(r, field{"available_seats_basic_economy", s.BasicEconomy},
					field{"available_seats_economy", s.Economy}, field{"available_seats_business", s.Business})
			}
			if p := d.Prices; p != nil {
				r = append(r, field{"price_basic_economy", p.BasicEconomy},
					field{"price_economy", p.Economy}, field{"price_business", p.Business})
			}
			r = append(r, field{"actual_departure_time_est", d.ActualDepartureTimeEst},
				field{"actual_arrival_time_est", d.ActualArrivalTimeEst},
				field{"estimated_departure_time_est", d.EstimatedDepartureTimeEst},
				field{"estimated_arrival_time_est", d.EstimatedArrivalTimeEst})
			seed["flight_dates"] = append(seed["flight_dates"], r)
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func readReservations(path string, users map[string]user, seed map[string][]row) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	// A reservation's position is its place in its owner's list.
	position := map[string]int{}
	owner := map[string]string{}
	for id, u := range users {
		for i, r := range u.Reservations {
			if prev, dup := owner[r]; dup {
				return fmt.Errorf("users.json: reservation %s is listed by %s and %s", r, prev, id)
			}
			position[r], owner[r] = i, id
		}
	}
	seen := 0
	err = members(raw, func(key string, val json.RawMessage) error {
		var r reservation
		if err := strict(val, &r); err != nil {
			return err
		}
		if r.ReservationID != key {
			return fmt.Errorf("reservation listed as %q has id %q", key, r.ReservationID)
		}
		switch owner[key] {
		case r.UserID:
		case "":
			return fmt.Errorf("reservation %s of %s is in no user's list", key, r.UserID)
		default:
			return fmt.Errorf("reservation %s belongs to %s but %s lists it", key, r.UserID, owner[key])
		}
		seen++
		seed["reservations"] = append(seed["reservations"], row{
			{"reservation_id", key}, {"user_id", r.UserID}, {"position", position[key]},
			{"origin", r.Origin}, {"destination", r.Destination}, {"flight_type", r.FlightType},
			{"cabin", r.Cabin}, {"created_at", r.CreatedAt}, {"total_baggages", r.TotalBaggages},
			{"nonfree_baggages", r.NonfreeBaggages}, {"insurance", r.Insurance}, {"status", r.Status},
		})
		for i, s := range r.Flights {
			seed["reservation_flights"] = append(seed["reservation_flights"], row{
				{"reservation_id", key}, {"position", i}, {"flight_number", s.FlightNumber}, {"date", s.Date},
				{"origin", s.Origin}, {"destination", s.Destination}, {"price", s.Price},
			})
		}
		for i, p := range r.Passengers {
			seed["reservation_passengers"] = append(seed["reservation_passengers"], row{
				{"reservation_id", key}, {"position", i}, {"first_name", p.FirstName}, {"last_name", p.LastName}, {"dob", p.DOB},
			})
		}
		for i, p := range r.PaymentHistory {
			seed["payment_history"] = append(seed["payment_history"], row{
				{"reservation_id", key}, {"position", i}, {"payment_id", p.PaymentID}, {"amount", p.Amount},
			})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if seen != len(owner) {
		return fmt.Errorf("users.json lists %d reservations, reservations.json holds %d", len(owner), seen)
	}
	return nil
}

// write replaces schema.sql and the seed files under out.
func write(out string, seed map[string][]row) error {
	return seedfile.Write(out, schema, tables, seed)
}
