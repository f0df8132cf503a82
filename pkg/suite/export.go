package suite

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/suitegen/suitegen/pkg/scenario"
)

// FormatJSONL is the one export format that needs no world: the suite's
// scenarios as they are saved. The benchmark formats replay each scenario
// in its world and are pkg/taubench's and pkg/tau2's.
const FormatJSONL = "jsonl"

// Export writes the suite saved under out (index.json order) to w: "jsonl" is
// one compact scenario per line.
func Export(out string, format string, w io.Writer) error {
	if format != FormatJSONL {
		return fmt.Errorf("suite: unknown format %q (want %s; pkg/taubench and pkg/tau2 export the benchmark formats)", format, FormatJSONL)
	}
	raw, err := os.ReadFile(filepath.Join(out, "index.json"))
	if err != nil {
		return fmt.Errorf("suite: %w", err)
	}
	var idx Index
	if err := json.Unmarshal(raw, &idx); err != nil {
		return fmt.Errorf("suite: index.json: %w", err)
	}
	bw := bufio.NewWriter(w)
	for _, e := range idx.Scenarios {
		if !safeName.MatchString(e.Name) {
			return fmt.Errorf("suite: index.json names %q, which is not a scenario folder name", e.Name)
		}
		path := filepath.Join(out, "scenarios", e.Name, "scenario.json")
		body, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("suite: %w", err)
		}
		line, err := jsonlLine(body)
		if err != nil {
			return fmt.Errorf("suite: %s: %w", path, err)
		}
		bw.Write(line)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("suite: %w", err)
	}
	return nil
}

// jsonlLine is a scenario file as one compact line; the file must hold a
// JSON object that decodes as a Scenario.
func jsonlLine(body []byte) ([]byte, error) {
	if _, err := decode(body); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, body); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// decode is the shared strict scenario decoder: unknown fields, trailing data
// and oversized files are errors.
func decode(body []byte) (*scenario.Scenario, error) {
	return scenario.Decode(body)
}
