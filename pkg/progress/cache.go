package progress

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"
)

// answers keeps each rendered API answer for a short while, so any number of
// open pages polling every second cost one ledger read per answer per
// period, and gives each its ETag, so a page that already has an answer gets
// 304 and no body.
type answers struct {
	ttl time.Duration
	max int

	mu sync.Mutex
	m  map[string]answer
}

type answer struct {
	at   time.Time
	body []byte
	etag string
}

func newAnswers(ttl time.Duration, max int) *answers {
	return &answers{ttl: ttl, max: max, m: map[string]answer{}}
}

func (c *answers) get(key string, now time.Time) (answer, bool) {
	if c.ttl <= 0 {
		return answer{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.m[key]
	if !ok || now.Sub(a.at) >= c.ttl {
		return answer{}, false
	}
	return a, true
}

func (c *answers) put(key string, a answer) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		// Expired answers go first; when none has, the whole map (a burst of
		// distinct keys, which a few pages never make).
		for k, v := range c.m {
			if a.at.Sub(v.at) >= c.ttl {
				delete(c.m, k)
			}
		}
		if len(c.m) >= c.max {
			clear(c.m)
		}
	}
	c.m[key] = a
}

// render encodes v as the answer's body with its ETag.
func render(v any, now time.Time) (answer, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return answer{}, err
	}
	body = append(body, '\n')
	sum := sha256.Sum256(body)
	return answer{at: now, body: body, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}, nil
}

// send writes a, or 304 when the request's If-None-Match names its ETag.
func send(w http.ResponseWriter, r *http.Request, a answer) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	// no-cache: a browser may keep the answer but must ask again each time;
	// the ETag makes asking cheap.
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("ETag", a.etag)
	if matches(r.Header.Get("If-None-Match"), a.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.WriteHeader(http.StatusOK)
	w.Write(a.body)
}

// matches reports whether an If-None-Match value names etag (weak or not).
func matches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}
