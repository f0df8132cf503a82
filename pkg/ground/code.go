package ground

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ErrCodeSpace is a column whose shape has no room left for another fresh
// value: the contract cannot supply that many distinct cases.
var ErrCodeSpace = errors.New("ground: no fresh value left in the column's shape")

// A fresh value of a column is the slot-th value, in the shape of a template
// value, that the seed does not hold: slots are dealt so that no two
// scenarios of a run (nor two rows of one scenario) ever share one, whatever
// the suite's size. A shape keeps every character the column's CHECK
// patterns fix and counts over the others (digits base 10, letters base 26)
// from just past the largest seed value of that shape, so "#W1120" is
// followed by "#W1121" and "AB12 CDE" by "AB12 CDF".

// shape is a text code's pattern: which bytes may vary and how.
type shape struct {
	base  []byte // the template value
	class []byte // per byte: 'd' digit, 'U' upper, 'l' lower, 0 fixed
}

func (s shape) key() string { return string(s.class) + "\x00" + s.fixedText() }

func (s shape) fixedText() string {
	b := make([]byte, len(s.base))
	for i := range s.base {
		if s.class[i] == 0 {
			b[i] = s.base[i]
		} else {
			b[i] = '_'
		}
	}
	return string(b)
}

func radix(c byte) int64 {
	if c == 'd' {
		return 10
	}
	return 26
}

func classOf(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return 'd'
	case c >= 'A' && c <= 'Z':
		return 'U'
	case c >= 'a' && c <= 'z':
		return 'l'
	}
	return 0
}

// shapeOf reads the shape of v under the column's patterns: a character is
// fixed when changing it would break one of them.
func shapeOf(v string, patterns []*regexp.Regexp) shape {
	s := shape{base: []byte(v), class: make([]byte, len(v))}
	for i := 0; i < len(v); i++ {
		cl := classOf(v[i])
		if cl == 0 {
			continue
		}
		alt := []byte(v)
		alt[i] = other(v[i], cl)
		ok := true
		for _, re := range patterns {
			if !re.Match(alt) {
				ok = false
				break
			}
		}
		if ok {
			s.class[i] = cl
		}
	}
	return s
}

func other(c, cl byte) byte {
	switch cl {
	case 'd':
		if c == '1' {
			return '2'
		}
		return '1'
	case 'U':
		if c == 'B' {
			return 'C'
		}
		return 'B'
	default:
		if c == 'b' {
			return 'c'
		}
		return 'b'
	}
}

// fits reports whether v has the shape's fixed characters and classes.
func (s shape) fits(v string) bool {
	if len(v) != len(s.base) {
		return false
	}
	for i := 0; i < len(v); i++ {
		if s.class[i] == 0 {
			if v[i] != s.base[i] {
				return false
			}
		} else if classOf(v[i]) != s.class[i] {
			return false
		}
	}
	return true
}

// size is how many values the shape holds (capped).
func (s shape) size() int64 {
	n := int64(1)
	for _, c := range s.class {
		if c == 0 {
			continue
		}
		if n > math.MaxInt64/26 {
			return math.MaxInt64 / 26
		}
		n *= radix(c)
	}
	return n
}

// number reads v (which fits the shape) as a mixed-radix number.
func (s shape) number(v string) int64 {
	n := int64(0)
	for i := 0; i < len(v); i++ {
		cl := s.class[i]
		if cl == 0 {
			continue
		}
		var d int64
		switch cl {
		case 'd':
			d = int64(v[i] - '0')
		case 'U':
			d = int64(v[i] - 'A')
		default:
			d = int64(v[i] - 'a')
		}
		if n > (math.MaxInt64-d)/radix(cl) {
			return math.MaxInt64
		}
		n = n*radix(cl) + d
	}
	return n
}

// text writes n in the shape.
func (s shape) text(n int64) string {
	b := append([]byte(nil), s.base...)
	for i := len(b) - 1; i >= 0; i-- {
		cl := s.class[i]
		if cl == 0 {
			continue
		}
		r := radix(cl)
		d := byte(n % r)
		n /= r
		switch cl {
		case 'd':
			b[i] = '0' + d
		case 'U':
			b[i] = 'A' + d
		default:
			b[i] = 'a' + d
		}
	}
	return string(b)
}

// space is one shape of one column: its room and the seed values it must skip.
type space struct {
	shape shape
	size  int64
	start int64   // just past the largest seed value of the shape
	seeds []int64 // seed values of the shape, sorted
}

// Headroom is how many values at the top of a space are never minted: a
// handler that numbers a new row one past the largest ("AUTH-" and max+1)
// must still find a value its column's CHECK accepts after a case minted
// the largest one (at most a quarter of the values above the seed's).
const Headroom = 16

// above is how many values past the seed's largest are minted.
func (sp *space) above() int64 {
	n := sp.size - sp.start
	return n - min(Headroom, n/4)
}

// at returns the slot-th fresh value: counting up from start, short of the
// headroom at the top, then the values below start that the seed does not
// hold.
func (sp *space) at(slot int64) (string, error) {
	if slot < 0 {
		return "", fmt.Errorf("%w: negative slot %d", ErrCodeSpace, slot)
	}
	if slot < sp.above() {
		return sp.shape.text(sp.start + slot), nil
	}
	r := slot - sp.above()
	// The r-th number in [0, start) not among the seeds.
	lo, hi := int64(0), sp.start
	free := func(x int64) int64 { // free numbers in [0, x)
		return x - int64(sort.Search(len(sp.seeds), func(i int) bool { return sp.seeds[i] >= x }))
	}
	if free(sp.start) <= r {
		return "", fmt.Errorf("%w: %s holds %d values", ErrCodeSpace, sp.shape.fixedText(), sp.size-int64(len(sp.seeds)))
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if free(mid+1) > r {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return sp.shape.text(lo), nil
}

// room is how many fresh values the space holds: those minted above the
// seed's largest, and those below it the seed does not hold.
func (sp *space) room() int64 { return sp.above() + sp.start - int64(len(sp.seeds)) }

// patterns are the regular expressions the column's CHECKs hold it to, as
// far as Go reads them the way Postgres does.
func (g *Graph) patterns(table, col string) []*regexp.Regexp {
	key := "p\x00" + table + "\x00" + col
	if v, ok := g.spaces.Load(key); ok {
		return v.([]*regexp.Regexp)
	}
	t := g.C.Table(table)
	if t == nil {
		return nil
	}
	out := []*regexp.Regexp{}
	defer func() { g.spaces.Store(key, out) }()
	for _, ck := range t.ChecksOn(col) {
		if ck.Op != "~" || len(ck.Values) != 1 {
			continue
		}
		if re, err := regexp.Compile(ck.Values[0]); err == nil {
			out = append(out, re)
		}
	}
	return out
}

// textSpace returns the code space of a column in the shape of template.
func (g *Graph) textSpace(table, col, template string) *space {
	byValue := "v\x00" + table + "\x00" + col + "\x00" + template
	if v, ok := g.spaces.Load(byValue); ok {
		return v.(*space)
	}
	sp := g.shapeSpace(table, col, shapeOf(template, g.patterns(table, col)))
	g.spaces.Store(byValue, sp)
	return sp
}

// shapeSpace returns the code space of a column's values of one shape.
func (g *Graph) shapeSpace(table, col string, sh shape) *space {
	key := "t\x00" + table + "\x00" + col + "\x00" + sh.key()
	if v, ok := g.spaces.Load(key); ok {
		return v.(*space)
	}
	sp := &space{shape: sh, size: sh.size()}
	seen := map[int64]bool{}
	for _, r := range g.Rows(table) {
		s, ok := r[col].(string)
		if !ok || !sh.fits(s) {
			continue
		}
		n := sh.number(s)
		if !seen[n] {
			seen[n] = true
			sp.seeds = append(sp.seeds, n)
		}
		if n+1 > sp.start {
			sp.start = n + 1
		}
	}
	sort.Slice(sp.seeds, func(i, j int) bool { return sp.seeds[i] < sp.seeds[j] })
	if sp.start > sp.size {
		sp.start = sp.size
	}
	v, _ := g.spaces.LoadOrStore(key, sp)
	return v.(*space)
}

// intSpace returns the integer space of a column: past its largest seed
// value, up to what its CHECKs and type allow.
func (g *Graph) intSpace(table, col string) *space {
	key := "i\x00" + table + "\x00" + col
	if v, ok := g.spaces.Load(key); ok {
		return v.(*space)
	}
	top := int64(math.MaxInt64 / 2)
	if t := g.C.Table(table); t != nil {
		if c := t.Column(col); c != nil {
			switch {
			case strings.HasPrefix(c.Type, "smallint") || strings.HasPrefix(c.Type, "int2") || c.Type == "smallserial":
				top = math.MaxInt16
			case c.Type == "integer" || c.Type == "int" || strings.HasPrefix(c.Type, "int4") || c.Type == "serial":
				top = math.MaxInt32
			}
		}
		for _, ck := range t.ChecksOn(col) {
			var hi string
			switch ck.Op {
			case "between":
				hi = ck.Values[1]
			case "<=":
				hi = ck.Values[0]
			case "<":
				if n, err := strconv.ParseInt(ck.Values[0], 10, 64); err == nil {
					hi = strconv.FormatInt(n-1, 10)
				}
			}
			if n, err := strconv.ParseInt(hi, 10, 64); err == nil && n < top {
				top = n
			}
		}
	}
	sp := &space{size: top + 1}
	for _, r := range g.Rows(table) {
		if n, ok := asInt(r[col]); ok && n+1 > sp.start {
			sp.start = n + 1
		}
	}
	if sp.start > sp.size {
		sp.start = sp.size
	}
	v, _ := g.spaces.LoadOrStore(key, sp)
	return v.(*space)
}

func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case float64:
		if x == math.Trunc(x) {
			return int64(x), true
		}
	}
	return 0, false
}

// asFloat reads a number, or a decimal written as text (a numeric column).
func asFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case float64:
		return x, true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	}
	return 0, false
}

// Fresh returns the slot-th fresh value for a column, in the shape of old (a
// value of that column): one the seed does not hold and no other slot gets.
func (g *Graph) Fresh(table, col string, old any, slot int64) (any, error) {
	switch x := old.(type) {
	case int64, int, float64:
		sp := g.intSpace(table, col)
		if slot >= sp.above() {
			return nil, fmt.Errorf("%w: %s.%s has room for %d more", ErrCodeSpace, table, col, sp.above())
		}
		n := sp.start + slot
		if _, isFloat := x.(float64); isFloat {
			return float64(n), nil
		}
		return n, nil
	case string:
		if t, ok := timeOf(x); ok {
			// A timestamp in a unique set moves by microseconds: no one
			// reads them, every comparison of days and hours still holds.
			return t.Add(time.Duration(slot+1) * time.Microsecond).Format(time.RFC3339Nano), nil
		}
		if d, err := time.Parse("2006-01-02", x); err == nil {
			return d.AddDate(0, 0, int(slot+1)).Format("2006-01-02"), nil
		}
		sp := g.textSpace(table, col, x)
		if sp.size <= 1 {
			// Nothing to count over (a name, a word): a suffix keeps it new.
			return fmt.Sprintf("%s %d", x, slot+1), nil
		}
		// A short code ("C1") runs out of room: the slots past it take
		// longer codes ("C10000"), as long as the column's CHECKs accept them.
		tmpl := x
		for widen := 0; ; widen++ {
			if slot < sp.room() {
				v, err := sp.at(slot)
				if err != nil {
					return nil, fmt.Errorf("%s.%s: %w", table, col, err)
				}
				return v, nil
			}
			slot -= max(sp.room(), 0)
			next, ok := g.widen(table, col, tmpl)
			if !ok || widen >= 8 {
				return nil, fmt.Errorf("%w: %s.%s: %s holds %d values", ErrCodeSpace, table, col, sp.shape.fixedText(), sp.room())
			}
			tmpl = next
			sp = g.textSpace(table, col, tmpl)
		}
	case bool, nil:
		return nil, fmt.Errorf("%w: %s.%s holds %v", ErrCodeSpace, table, col, old)
	}
	return nil, fmt.Errorf("%w: %s.%s holds a %T", ErrCodeSpace, table, col, old)
}

// widen is a code one digit longer than tmpl (its last run of digits, or a
// digit appended), when the column's patterns accept it.
func (g *Graph) widen(table, col, tmpl string) (string, bool) {
	end := strings.LastIndexFunc(tmpl, func(r rune) bool { return r >= '0' && r <= '9' })
	var w string
	if end < 0 {
		w = tmpl + "0"
	} else {
		w = tmpl[:end+1] + "0" + tmpl[end+1:]
	}
	for _, re := range g.patterns(table, col) {
		if !re.MatchString(w) {
			return "", false
		}
	}
	if t := g.C.Table(table); t != nil {
		for _, ck := range t.ChecksOn(col) {
			if ck.Op == "length" || ck.Op == "in" {
				return "", false
			}
		}
		if c := t.Column(col); c != nil && (strings.HasPrefix(c.Type, "char(") || strings.HasPrefix(c.Type, "character(")) {
			return "", false
		}
	}
	return w, true
}

// Room is how many fresh values a column has in the shape of old: an upper
// bound on the cases that can each mint one.
func (g *Graph) Room(table, col string, old any) int64 {
	switch x := old.(type) {
	case int64, int, float64:
		return g.intSpace(table, col).above()
	case string:
		if _, ok := timeOf(x); ok {
			return math.MaxInt32
		}
		sp := g.textSpace(table, col, x)
		if sp.size <= 1 {
			return math.MaxInt32
		}
		return sp.room()
	}
	return 0
}

func timeOf(s string) (time.Time, bool) {
	if len(s) < 19 || s[4] != '-' || s[10] != 'T' && s[10] != ' ' {
		return time.Time{}, false
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05Z07:00", "2006-01-02T15:04:05", "2006-01-02 15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
