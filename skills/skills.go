// Package skills holds the prompts writers are given, as markdown files
// embedded in the binary. A file under kinds/ whose front matter says
// `applies_to: modality=<kind>` is appended for agents of that modality, and
// one that says `applies_to: direction=outbound` for contracts with outbound
// use cases, so supporting a new kind of agent is adding a file. A file
// under buckets/ whose front matter says `applies_to: bucket=<feature>`
// explains a feature of a bucket (a second request, a record from outside
// the case): a slice's brief carries it only when one of its buckets has
// that feature, since every turn of the session resends the brief.
package skills

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/suitegen/suitegen/pkg/contract"
)

//go:embed *.md kinds/*.md buckets/*.md
var files embed.FS

// File returns one embedded skill file.
func File(name string) (string, error) {
	b, err := files.ReadFile(name)
	if err != nil {
		return "", fmt.Errorf("skills: %w", err)
	}
	return string(b), nil
}

// Kinds returns the bodies of the kinds/ files that apply to a contract: a
// file whose front matter says `applies_to: modality=<m>` applies to agents
// of that modality, `applies_to: direction=<d>` to contracts with a use case
// of that direction (a use case's, as the loader settled it).
func Kinds(c *contract.Contract) []string {
	keys := map[string]bool{"modality=" + c.Modality: true}
	for _, u := range c.UseCases {
		if u.Direction != "" {
			keys["direction="+u.Direction] = true
		}
	}
	names, _ := fs.Glob(files, "kinds/*.md")
	sort.Strings(names)
	var out []string
	for _, n := range names {
		b, _ := files.ReadFile(n)
		applies, body := frontMatter(string(b))
		if keys[applies] {
			out = append(out, body)
		}
	}
	return out
}

// Buckets returns the bodies of the buckets/ files that explain the given
// features of a slice's buckets, in the features' order.
func Buckets(features []string) []string {
	names, _ := fs.Glob(files, "buckets/*.md")
	body := map[string]string{}
	for _, n := range names {
		b, _ := files.ReadFile(n)
		applies, text := frontMatter(string(b))
		body[applies] = text
	}
	var out []string
	for _, f := range features {
		if text, ok := body["bucket="+f]; ok {
			out = append(out, text)
		}
	}
	return out
}

func frontMatter(s string) (applies, body string) {
	if !strings.HasPrefix(s, "---\n") {
		return "", s
	}
	end := strings.Index(s[4:], "\n---\n")
	if end < 0 {
		return "", s
	}
	for _, line := range strings.Split(s[4:4+end], "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "applies_to" {
			applies = strings.TrimSpace(v)
		}
	}
	return applies, s[4+end+5:]
}

// WriterPrompt is the system prompt of a writer session for a contract: the
// agent, then the method, then whatever its kind adds.
func WriterPrompt(c *contract.Contract) string {
	var s strings.Builder
	fmt.Fprintf(&s, "## This agent\n\n%s: %s (%s, %s)\n", c.Agent, c.OneLiner, c.Modality, strings.Join(c.Direction, "/"))
	if c.Notes != "" {
		fmt.Fprintf(&s, "\n%s\n", strings.TrimSpace(c.Notes))
	}
	s.WriteString("\nHard rules:\n")
	for _, r := range c.Rules {
		fmt.Fprintf(&s, "- %s: %s\n", r.ID, r.Text)
	}
	s.WriteString("\nUse cases:\n")
	for _, u := range c.UseCases {
		fmt.Fprintf(&s, "- %s: %s\n", u.ID, u.Text)
		if u.Outbound() {
			fmt.Fprintf(&s, "  outbound: the agent calls the owner of a record of %s", u.Purpose)
			if u.MissedCall != "" {
				fmt.Fprintf(&s, "; missed call (voicemail, someone else): %s", u.MissedCall)
			}
			if u.CallLater != "" {
				fmt.Fprintf(&s, "; call later: %s", u.CallLater)
			}
			s.WriteString("\n")
		}
	}
	s.WriteString("\nTools:\n")
	named := requirementNames(c.Tools)
	if len(named.order) > 0 {
		s.WriteString("(a tool that requires R is called only after one of R's tools; several are all required)\n")
		for i, r := range named.order {
			fmt.Fprintf(&s, "R%d: %s\n", i+1, r)
		}
	}
	for _, t := range c.Tools {
		fmt.Fprintf(&s, "- %s: %s\n", t.Name, t.Description)
		var labels []string
		for _, r := range t.Requires {
			text := requirementText(r)
			if n, ok := named.index[text]; ok {
				labels = append(labels, fmt.Sprintf("R%d", n+1))
				continue
			}
			fmt.Fprintf(&s, "  requires %s\n", text)
		}
		if len(labels) > 0 {
			fmt.Fprintf(&s, "  requires %s\n", strings.Join(labels, ", "))
		}
	}
	s.WriteString("\nTables: ")
	for i, t := range c.Tables {
		if i > 0 {
			s.WriteString(", ")
		}
		s.WriteString(t.Name)
	}
	s.WriteString("\n\n")
	w, _ := File("writer.md")
	s.WriteString(w)
	for _, k := range Kinds(c) {
		s.WriteString("\n")
		s.WriteString(k)
	}
	return s.String()
}

// requirementText is a tool's requirement in words.
func requirementText(r contract.Requirement) string {
	text := fmt.Sprintf("one of %v", r.AnyOf)
	if len(r.Same) > 0 {
		text += fmt.Sprintf(" on the same %v", r.Same)
	}
	return text
}

// named are the requirements two tools or more share, each said once under
// a name: most tools of a contract often require the same look-up, and the
// system prompt is resent on every turn.
type named struct {
	order []string
	index map[string]int
}

func requirementNames(tools []contract.Tool) named {
	count := map[string]int{}
	var seen []string
	for _, t := range tools {
		for _, r := range t.Requires {
			text := requirementText(r)
			if count[text] == 0 {
				seen = append(seen, text)
			}
			count[text]++
		}
	}
	n := named{index: map[string]int{}}
	for _, text := range seen {
		if count[text] > 1 {
			n.index[text] = len(n.order)
			n.order = append(n.order, text)
		}
	}
	return n
}
