package world

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/suitegen/suitegen/pkg/contract"
)

// tool is a contract tool with its params schema compiled once.
type tool struct {
	t      *contract.Tool
	schema *jsonschema.Schema
}

func compileTools(c *contract.Contract) (map[string]*tool, error) {
	out := make(map[string]*tool, len(c.Tools))
	comp := jsonschema.NewCompiler()
	for i := range c.Tools {
		t := &c.Tools[i]
		params := t.Params
		if params == nil {
			params = map[string]any{"type": "object"}
		}
		raw, err := json.Marshal(params)
		if err != nil {
			return nil, fmt.Errorf("tool %s: params: %w", t.Name, err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("tool %s: params: %w", t.Name, err)
		}
		// An unknown argument is refused unless the author allowed them.
		if m, ok := doc.(map[string]any); ok {
			if _, ok := m["additionalProperties"]; !ok {
				m["additionalProperties"] = false
			}
		}
		url := "suitegen:///tools/" + t.Name + ".json"
		if err := comp.AddResource(url, doc); err != nil {
			return nil, fmt.Errorf("tool %s: params: %w", t.Name, err)
		}
		sch, err := comp.Compile(url)
		if err != nil {
			return nil, fmt.Errorf("tool %s: params: %w", t.Name, err)
		}
		out[t.Name] = &tool{t: t, schema: sch}
	}
	return out, nil
}

var printer = message.NewPrinter(language.English)

// validate checks args against the tool's params and says what is wrong in
// one line.
func (t *tool) validate(args map[string]any) error {
	var v any = map[string]any{}
	if args != nil {
		v = args
	}
	err := t.schema.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	var msgs []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			msg := e.ErrorKind.LocalizedString(printer)
			if len(e.InstanceLocation) > 0 {
				msg = strings.Join(e.InstanceLocation, ".") + ": " + msg
			}
			msgs = append(msgs, msg)
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.Strings(msgs)
	return errors.New(strings.Join(msgs, "; "))
}
