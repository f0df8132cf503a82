package contract

import (
	"regexp"
	"slices"
	"strings"
)

// What a handler's SQL names, read from its source (and the lib files it
// loads) without running it: a hint of what a tool does, which rehearsals
// confirm.
var (
	// readsTable finds the tables a handler reads rows of: FROM t (a joined
	// table only adds to the rows found).
	readsTable = regexp.MustCompile(`(?i)\bfrom\s+"?([a-z_][a-z0-9_]*)`)
	// writesTable finds the tables a handler writes: INSERT INTO t,
	// UPDATE t, DELETE FROM t.
	writesTable = regexp.MustCompile(`(?i)\b(?:insert\s+into|update|delete\s+from)\s+"?([a-z_][a-z0-9_]*)`)
	// loadsLib finds the lib files a Starlark file loads.
	loadsLib = regexp.MustCompile(`load\(\s*"([^"]+)"`)
)

// handlerSource is a tool's handler with the lib files it loads.
func (c *Contract) handlerSource(t *Tool) string {
	src := c.Sources[t.Handler]
	for _, m := range loadsLib.FindAllStringSubmatch(src, -1) {
		src += "\n" + c.Sources[m[1]]
	}
	return src
}

// HandlerSource is a tool's handler with the lib files it loads: what the
// tool does, as code.
func (c *Contract) HandlerSource(t *Tool) string { return c.handlerSource(t) }

// handlerReads are the tables a tool's handler reads rows of.
func (c *Contract) handlerReads(t *Tool) map[string]bool {
	out := map[string]bool{}
	for _, m := range readsTable.FindAllStringSubmatch(c.handlerSource(t), -1) {
		out[strings.ToLower(m[1])] = true
	}
	return out
}

// Writes are the tables of the world a tool's handler's SQL writes, in the
// order it names them.
func (c *Contract) Writes(t *Tool) []string {
	var out []string
	for _, m := range writesTable.FindAllStringSubmatch(c.handlerSource(t), -1) {
		name := strings.ToLower(m[1])
		if c.Table(name) != nil && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}
