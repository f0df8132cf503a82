// Command convert turns tau2-bench's telecom data (db.toml, the agent's
// database, and user_db.toml, the caller's handset) into this example's world:
// world/schema.sql and one world/seed/<table>.jsonl per table.
//
//	go run ./examples/telecom/convert -src PATH/TO/tau2-bench/data/tau2/domains/telecom
//
// Every record of the source is kept. Lists a customer holds (line_ids,
// bill_ids, payment_methods) become rows naming the customer; a bill's line
// items and a payment method's place in its list keep their order in a
// position column. Each line gets the handset of user_db.toml, since the source
// gives its one simulated user that device whatever line they call about.
package main

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/BurntSushi/toml"
)

//go:embed schema.sql
var schemaSQL []byte

func main() {
	src := flag.String("src", "", "tau2-bench's data/tau2/domains/telecom directory (holds db.toml and user_db.toml)")
	out := flag.String("out", "examples/telecom", "the example directory to write world/ into")
	flag.Parse()
	if *src == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: convert -src DIR [-out DIR]")
		os.Exit(2)
	}
	if err := run(*src, *out, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "convert:", err)
		os.Exit(1)
	}
}

func run(src, out string, log io.Writer) error {
	var db agentDB
	if err := decodeFile(filepath.Join(src, "db.toml"), &db); err != nil {
		return err
	}
	udb := userDB{Device: defaultHandset()}
	if err := decodeFile(filepath.Join(src, "user_db.toml"), &udb); err != nil {
		return err
	}
	if udb.Device.AppStatuses == nil {
		udb.Device.AppStatuses = defaultApps()
	}
	tables, err := convert(db, udb)
	if err != nil {
		return err
	}
	world := filepath.Join(out, "world")
	seedDir := filepath.Join(world, "seed")
	if err := os.MkdirAll(seedDir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(world, "schema.sql"), schemaSQL, 0o644); err != nil {
		return err
	}
	for _, t := range tables {
		var buf bytes.Buffer
		for _, r := range t.rows {
			line, err := r.marshal()
			if err != nil {
				return fmt.Errorf("%s: %w", t.name, err)
			}
			buf.Write(line)
			buf.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(seedDir, t.name+".jsonl"), buf.Bytes(), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(log, "%-16s %3d rows\n", t.name, len(t.rows))
	}
	return nil
}

func decodeFile(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := decode(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// decode reads TOML into v. A key the model below does not know would be
// dropped silently: it is an error, so a change in the source is noticed
// rather than half converted.
func decode(b []byte, v any) error {
	md, err := toml.Decode(string(b), v)
	if err != nil {
		return err
	}
	if und := md.Undecoded(); len(und) > 0 {
		return fmt.Errorf("keys this converter does not know: %v", und)
	}
	return nil
}

// The source's records, as its TOML spells them.
type agentDB struct {
	Plans     []plan     `toml:"plans"`
	Devices   []device   `toml:"devices"`
	Lines     []line     `toml:"lines"`
	Customers []customer `toml:"customers"`
	Bills     []bill     `toml:"bills"`
}

type plan struct {
	PlanID                  string  `toml:"plan_id"`
	Name                    string  `toml:"name"`
	DataLimitGB             float64 `toml:"data_limit_gb"`
	PricePerMonth           float64 `toml:"price_per_month"`
	DataRefuelingPricePerGB float64 `toml:"data_refueling_price_per_gb"`
}

type device struct {
	DeviceID             string  `toml:"device_id"`
	DeviceType           string  `toml:"device_type"`
	Model                string  `toml:"model"`
	IMEI                 *string `toml:"imei"`
	IsESIMCapable        bool    `toml:"is_esim_capable"`
	Activated            bool    `toml:"activated"`
	ActivationDate       *string `toml:"activation_date"`
	LastESIMTransferDate *string `toml:"last_esim_transfer_date"`
}

type line struct {
	LineID                 string  `toml:"line_id"`
	PhoneNumber            string  `toml:"phone_number"`
	Status                 *string `toml:"status"`
	PlanID                 string  `toml:"plan_id"`
	DeviceID               *string `toml:"device_id"`
	DataUsedGB             float64 `toml:"data_used_gb"`
	DataRefuelingGB        float64 `toml:"data_refueling_gb"`
	RoamingEnabled         bool    `toml:"roaming_enabled"`
	ContractEndDate        *string `toml:"contract_end_date"`
	LastPlanChangeDate     *string `toml:"last_plan_change_date"`
	LastSIMReplacementDate *string `toml:"last_sim_replacement_date"`
	SuspensionStartDate    *string `toml:"suspension_start_date"`
}

type address struct {
	Street  string `toml:"street"`
	City    string `toml:"city"`
	State   string `toml:"state"`
	ZipCode string `toml:"zip_code"`
}

type paymentMethod struct {
	MethodType         string `toml:"method_type"`
	AccountNumberLast4 string `toml:"account_number_last_4"`
	ExpirationDate     string `toml:"expiration_date"`
}

type customer struct {
	CustomerID                 string          `toml:"customer_id"`
	FullName                   string          `toml:"full_name"`
	DateOfBirth                string          `toml:"date_of_birth"`
	Email                      string          `toml:"email"`
	PhoneNumber                string          `toml:"phone_number"`
	Address                    address         `toml:"address"`
	AccountStatus              *string         `toml:"account_status"`
	PaymentMethods             []paymentMethod `toml:"payment_methods"`
	LineIDs                    []string        `toml:"line_ids"`
	BillIDs                    []string        `toml:"bill_ids"`
	CreatedAt                  *string         `toml:"created_at"`
	LastExtensionDate          *string         `toml:"last_extension_date"`
	GoodwillCreditUsedThisYear float64         `toml:"goodwill_credit_used_this_year"`
}

type lineItem struct {
	Description string  `toml:"description"`
	Amount      float64 `toml:"amount"`
	Date        string  `toml:"date"`
	ItemType    string  `toml:"item_type"`
}

type bill struct {
	BillID      string     `toml:"bill_id"`
	CustomerID  string     `toml:"customer_id"`
	PeriodStart string     `toml:"period_start"`
	PeriodEnd   string     `toml:"period_end"`
	IssueDate   string     `toml:"issue_date"`
	TotalDue    float64    `toml:"total_due"`
	DueDate     string     `toml:"due_date"`
	Status      *string    `toml:"status"`
	LineItems   []lineItem `toml:"line_items"`
}

type userDB struct {
	Device handset `toml:"device"`
}

type apnSettings struct {
	APNName     string  `toml:"apn_name"`
	ResetAtBoot bool    `toml:"reset_at_reboot"`
	MMSAPN      *string `toml:"mms_apn"`
	MMSCURL     *string `toml:"mmsc_url"`
	MMSProxy    *string `toml:"mms_proxy"`
	MMSPort     *int    `toml:"mms_port"`
}

type permissions struct {
	SMS     bool `toml:"sms"`
	Storage bool `toml:"storage"`
	Phone   bool `toml:"phone"`
	Network bool `toml:"network"`
}

type appStatus struct {
	AppName     string      `toml:"app_name"`
	Permissions permissions `toml:"permissions"`
}

type vpnDetails struct {
	ServerAddress     *string `toml:"server_address"`
	Protocol          *string `toml:"protocol"`
	ServerPerformance string  `toml:"server_performance"`
}

// handset is user_db.toml's [device]. Fields the network derives from the
// settings (signal, technology, connection status) are read so that an
// unknown key is still noticed, but not stored: lib/phone.star derives them.
type handset struct {
	SIMCardStatus              string               `toml:"sim_card_status"`
	SIMCardMissing             bool                 `toml:"sim_card_missing"`
	AirplaneMode               bool                 `toml:"airplane_mode"`
	NetworkSignalStrength      string               `toml:"network_signal_strength"`
	NetworkTechnologyConnected string               `toml:"network_technology_connected"`
	NetworkConnectionStatus    string               `toml:"network_connection_status"`
	BatteryLevel               int                  `toml:"battery_level"`
	DataEnabled                bool                 `toml:"data_enabled"`
	RoamingEnabled             bool                 `toml:"roaming_enabled"`
	NetworkModePreference      string               `toml:"network_mode_preference"`
	ActiveAPNSettings          apnSettings          `toml:"active_apn_settings"`
	WifiEnabled                bool                 `toml:"wifi_enabled"`
	WifiConnected              bool                 `toml:"wifi_connected"`
	WifiSSID                   *string              `toml:"wifi_ssid"`
	WifiSignalStrength         string               `toml:"wifi_signal_strength"`
	WifiCallingEnabled         bool                 `toml:"wifi_calling_enabled"`
	WifiCallingMMSOverWifi     bool                 `toml:"wifi_calling_mms_over_wifi"`
	DataSaverMode              bool                 `toml:"data_saver_mode"`
	VPNEnabledSetting          bool                 `toml:"vpn_enabled_setting"`
	VPNConnected               bool                 `toml:"vpn_connected"`
	VPNDetails                 *vpnDetails          `toml:"vpn_details"`
	AppStatuses                map[string]appStatus `toml:"app_statuses"`
}

// table is one seed file: rows in the order they load.
type table struct {
	name string
	rows []row
}

// row keeps its columns in schema order, so seed lines read like the schema.
type row []col

type col struct {
	name  string
	value any
}

func (r row) marshal() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, c := range r {
		if i > 0 {
			buf.WriteString(", ")
		}
		k, _ := json.Marshal(c.name)
		v, err := json.Marshal(c.value)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.name, err)
		}
		buf.Write(k)
		buf.WriteString(": ")
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// num keeps a float's decimal point in the seed (40.0, not 40), as the
// source writes it.
type num float64

func (n num) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(float64(n))
	if err != nil {
		return nil, err
	}
	if !bytes.ContainsAny(b, ".eE") {
		b = append(b, ".0"...)
	}
	return b, nil
}

func convert(db agentDB, udb userDB) ([]table, error) {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }

	plans := table{name: "plans"}
	for _, p := range db.Plans {
		plans.rows = append(plans.rows, row{
			{"plan_id", p.PlanID}, {"name", p.Name}, {"data_limit_gb", num(p.DataLimitGB)},
			{"price_per_month", num(p.PricePerMonth)}, {"data_refueling_price_per_gb", num(p.DataRefuelingPricePerGB)},
		})
	}

	devices := table{name: "devices"}
	for _, d := range db.Devices {
		devices.rows = append(devices.rows, row{
			{"device_id", d.DeviceID}, {"device_type", d.DeviceType}, {"model", d.Model}, {"imei", d.IMEI},
			{"is_esim_capable", d.IsESIMCapable}, {"activated", d.Activated},
			{"activation_date", d.ActivationDate}, {"last_esim_transfer_date", d.LastESIMTransferDate},
		})
	}

	customers := table{name: "customers"}
	methods := table{name: "payment_methods"}
	owner := map[string]string{} // line_id -> customer_id
	billOwner := map[string]string{}
	for _, c := range db.Customers {
		created := c.CreatedAt
		if created == nil {
			s := "2025-01-01T00:00:00" // the source's default for created_at
			created = &s
		}
		customers.rows = append(customers.rows, row{
			{"customer_id", c.CustomerID}, {"full_name", c.FullName}, {"date_of_birth", c.DateOfBirth},
			{"email", c.Email}, {"phone_number", c.PhoneNumber},
			{"street", c.Address.Street}, {"city", c.Address.City}, {"state", c.Address.State}, {"zip_code", c.Address.ZipCode},
			{"account_status", or(c.AccountStatus, "Pending Verification")}, {"created_at", *created}, {"last_extension_date", c.LastExtensionDate},
			{"goodwill_credit_used_this_year", num(c.GoodwillCreditUsedThisYear)},
		})
		for i, m := range c.PaymentMethods {
			methods.rows = append(methods.rows, row{
				{"customer_id", c.CustomerID}, {"position", i + 1}, {"method_type", m.MethodType},
				{"account_number_last_4", m.AccountNumberLast4}, {"expiration_date", m.ExpirationDate},
			})
		}
		for _, id := range c.LineIDs {
			if prev, ok := owner[id]; ok {
				fail("line %s is listed by customers %s and %s; a line has one owner here", id, prev, c.CustomerID)
			}
			owner[id] = c.CustomerID
		}
		for _, id := range c.BillIDs {
			billOwner[id] = c.CustomerID
		}
	}

	lines := table{name: "lines"}
	phones := table{name: "user_phones"}
	apps := table{name: "user_phone_apps"}
	h := udb.Device
	appNames := make([]string, 0, len(h.AppStatuses))
	for name := range h.AppStatuses {
		appNames = append(appNames, name)
	}
	sort.Strings(appNames)
	var vpnPerf any
	if h.VPNDetails != nil {
		vpnPerf = h.VPNDetails.ServerPerformance
	}
	for _, l := range db.Lines {
		cust, ok := owner[l.LineID]
		if !ok {
			fail("line %s is listed by no customer", l.LineID)
			continue
		}
		lines.rows = append(lines.rows, row{
			{"line_id", l.LineID}, {"customer_id", cust}, {"phone_number", l.PhoneNumber}, {"status", or(l.Status, "Pending Activation")},
			{"plan_id", l.PlanID}, {"device_id", l.DeviceID}, {"data_used_gb", num(l.DataUsedGB)},
			{"data_refueling_gb", num(l.DataRefuelingGB)}, {"roaming_enabled", l.RoamingEnabled},
			{"contract_end_date", l.ContractEndDate}, {"last_plan_change_date", l.LastPlanChangeDate},
			{"last_sim_replacement_date", l.LastSIMReplacementDate}, {"suspension_start_date", l.SuspensionStartDate},
		})
		phones.rows = append(phones.rows, row{
			{"line_id", l.LineID}, {"sim_card_status", h.SIMCardStatus}, {"sim_card_missing", h.SIMCardMissing},
			{"airplane_mode", h.AirplaneMode}, {"battery_level", h.BatteryLevel}, {"data_enabled", h.DataEnabled},
			{"roaming_enabled", h.RoamingEnabled}, {"network_mode_preference", h.NetworkModePreference},
			{"apn_name", h.ActiveAPNSettings.APNName}, {"mms_apn", h.ActiveAPNSettings.MMSAPN},
			{"mmsc_url", h.ActiveAPNSettings.MMSCURL}, {"wifi_enabled", h.WifiEnabled}, {"wifi_connected", h.WifiConnected},
			{"wifi_calling_enabled", h.WifiCallingEnabled}, {"wifi_calling_mms_over_wifi", h.WifiCallingMMSOverWifi},
			{"data_saver_mode", h.DataSaverMode}, {"vpn_enabled_setting", h.VPNEnabledSetting},
			{"vpn_connected", h.VPNConnected}, {"vpn_server_performance", vpnPerf}, {"is_abroad", false},
		})
		for _, name := range appNames {
			p := h.AppStatuses[name].Permissions
			apps.rows = append(apps.rows, row{
				{"line_id", l.LineID}, {"app_name", name}, {"sms", p.SMS}, {"storage", p.Storage},
				{"phone", p.Phone}, {"network", p.Network},
			})
		}
	}
	for id := range owner {
		if !hasLine(db.Lines, id) {
			fail("a customer lists line %s, which does not exist", id)
		}
	}

	bills := table{name: "bills"}
	items := table{name: "bill_line_items"}
	for _, b := range db.Bills {
		if o, ok := billOwner[b.BillID]; ok && o != b.CustomerID {
			fail("bill %s belongs to %s but customer %s lists it", b.BillID, b.CustomerID, o)
		}
		bills.rows = append(bills.rows, row{
			{"bill_id", b.BillID}, {"customer_id", b.CustomerID}, {"period_start", b.PeriodStart},
			{"period_end", b.PeriodEnd}, {"issue_date", b.IssueDate}, {"total_due", num(b.TotalDue)},
			{"due_date", b.DueDate}, {"status", or(b.Status, "Draft")},
		})
		for i, it := range b.LineItems {
			items.rows = append(items.rows, row{
				{"bill_id", b.BillID}, {"position", i + 1}, {"description", it.Description},
				{"amount", num(it.Amount)}, {"date", it.Date}, {"item_type", it.ItemType},
			})
		}
	}
	// Schema order: a table loads after the tables it references.
	tables := []table{plans, devices, customers, methods, lines, bills, items, phones, apps}
	for _, t := range tables {
		for _, r := range t.rows {
			if _, err := r.marshal(); err != nil { // a nan or inf number, which JSON cannot hold
				fail("%s %v: %v", t.name, r[0].value, err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return tables, nil
}

// or is *p, or def when the source leaves the field out (its model's default).
func or(p *string, def string) string {
	if p == nil {
		return def
	}
	return *p
}

// defaultHandset is the source's device model with nothing set: what a key
// user_db.toml leaves out stands at.
func defaultHandset() handset {
	mms, mmsc := "mms", "http://mms.carrier.com/mms/wapenc"
	return handset{
		SIMCardStatus: "active", NetworkSignalStrength: "good", NetworkTechnologyConnected: "5G",
		NetworkConnectionStatus: "connected", BatteryLevel: 80, DataEnabled: true,
		NetworkModePreference: "4g_5g_preferred", WifiSignalStrength: "none",
		ActiveAPNSettings: apnSettings{APNName: "internet", MMSAPN: &mms, MMSCURL: &mmsc},
	}
}

// defaultApps is the source's default app list, used when user_db.toml
// gives none (a list it gives replaces it whole).
func defaultApps() map[string]appStatus {
	return map[string]appStatus{
		"messaging": {AppName: "messaging", Permissions: permissions{SMS: true, Storage: true, Phone: true}},
		"browser":   {AppName: "browser", Permissions: permissions{Network: true, Storage: true}},
	}
}

func hasLine(ls []line, id string) bool {
	for _, l := range ls {
		if l.LineID == id {
			return true
		}
	}
	return false
}
