package contractgen

import (
	"fmt"
	"sort"
	"strings"
)

// missExamples is how many examples of a kind of miss Misses keeps.
const missExamples = 3

// Misses counts what a measure against the ground truth missed, by kind,
// and keeps the first few examples of each kind in words. The zero value is
// ready to use.
type Misses struct {
	count    map[string]int
	examples map[string][]string
}

// Add counts one miss of kind, with example as its words.
func (m *Misses) Add(kind, example string) {
	if m.count == nil {
		m.count = map[string]int{}
		m.examples = map[string][]string{}
	}
	m.count[kind]++
	if len(m.examples[kind]) < missExamples {
		m.examples[kind] = append(m.examples[kind], example)
	}
}

// Addf counts one miss of kind, its example formatted as fmt.Sprintf does.
func (m *Misses) Addf(kind, format string, a ...any) {
	m.Add(kind, fmt.Sprintf(format, a...))
}

// Count is how many misses of kind were added.
func (m *Misses) Count(kind string) int { return m.count[kind] }

// Total is how many misses were added, of every kind.
func (m *Misses) Total() int {
	n := 0
	for _, c := range m.count {
		n += c
	}
	return n
}

// String lists the misses by kind, the most common first (alike counts by
// name), each with its examples.
func (m *Misses) String() string {
	kinds := make([]string, 0, len(m.count))
	for k := range m.count {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		if m.count[kinds[i]] != m.count[kinds[j]] {
			return m.count[kinds[i]] > m.count[kinds[j]]
		}
		return kinds[i] < kinds[j]
	})
	var b strings.Builder
	b.WriteString("misses by reason, most common first:\n")
	for _, k := range kinds {
		fmt.Fprintf(&b, "  %5d  %s\n", m.count[k], k)
		for _, e := range m.examples[k] {
			fmt.Fprintf(&b, "           e.g. %s\n", e)
		}
	}
	return b.String()
}

// Gist keeps the first eight words of a reason, enough to group alike
// reasons under one kind of miss while their details differ.
func Gist(reason string) string {
	w := strings.Fields(reason)
	if len(w) > 8 {
		w = w[:8]
	}
	return strings.Join(w, " ")
}
