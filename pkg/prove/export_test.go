package prove

// Number reads a decoded scenario value as a number, as the gates do, for
// the external tests.
var Number = number

// ReplaceAt is v with nv at path (map keys and list indexes), v left as it
// was.
var ReplaceAt = replaceAt

// NumberAt is one number inside a value: where it is and what it holds.
type NumberAt struct {
	Path  []any
	Value any
}

// NumbersIn are the numbers of v at any depth, as the tempting-faithful
// gate reads them.
func NumbersIn(v any) []NumberAt {
	var out []NumberAt
	for _, lf := range numberLeaves("", "", v, nil) {
		out = append(out, NumberAt{lf.at, lf.v})
	}
	return out
}
