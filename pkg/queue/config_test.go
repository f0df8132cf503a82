package queue

import (
	"strings"
	"testing"
	"time"
)

// TestConfigValidate: every bad field is named, all at once.
func TestConfigValidate(t *testing.T) {
	if err := (Config{}).Validate(); err != nil {
		t.Fatalf("zero config with defaults: %v", err)
	}
	for _, tc := range []struct {
		field string
		cfg   Config
	}{
		{"Stream", Config{Stream: "a.b"}},
		{"Consumer", Config{Consumer: "x y"}},
		{"SubjectPrefix", Config{SubjectPrefix: "suitegen.*"}},
		{"SubjectPrefix", Config{SubjectPrefix: "a..b"}},
		{"AckWait", Config{AckWait: time.Millisecond}},
		{"MaxDeliver", Config{MaxDeliver: -1}},
		{"MaxAckPending", Config{MaxAckPending: -1}},
		{"Replicas", Config{Replicas: 7}},
		{"Duplicates", Config{Duplicates: time.Millisecond}},
		{"Storage", Config{Storage: 9}},
		{"FetchWait", Config{FetchWait: time.Microsecond}},
		{"OpTimeout", Config{OpTimeout: -time.Second}},
	} {
		err := tc.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.field+":") {
			t.Errorf("%+v: got %v, want an error naming %s", tc.cfg, err, tc.field)
		}
	}
	// Every problem at once.
	err := Config{AckWait: time.Millisecond, MaxDeliver: -2}.Validate()
	if err == nil || !strings.Contains(err.Error(), "AckWait") || !strings.Contains(err.Error(), "MaxDeliver") {
		t.Errorf("two bad fields: got %v", err)
	}
}
