package contract

import (
	"bytes"
	_ "embed"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaJSON is the JSON Schema (draft 2020-12) of contract.yaml, published
// as docs/contract.schema.json for editors and other tools.
//
//go:embed schema.json
var schemaJSON []byte

// SchemaJSON returns the JSON Schema of contract.yaml.
func SchemaJSON() []byte {
	return append([]byte(nil), schemaJSON...)
}

// CompileSchema compiles SchemaJSON, for validating a contract.yaml decoded
// to JSON values (what Load does is stricter; the schema is for editors).
func CompileSchema() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, fmt.Errorf("contract schema: %w", err)
	}
	comp := jsonschema.NewCompiler()
	comp.UseLoader(noLoader{})
	const url = "urn:suitegen:contract.schema.json"
	if err := comp.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("contract schema: %w", err)
	}
	s, err := comp.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("contract schema: %w", err)
	}
	return s, nil
}
