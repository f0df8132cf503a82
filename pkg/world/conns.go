package world

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"
)

// conns are a world's connections: sessions of the world's own login role,
// never of the application's, so no statement a copy sends can reach what
// that role may not. They run no goroutine of their own; a session idle for
// idleFor is closed by a timer, so the worlds of contracts a long-lived
// process no longer works on hold no sessions.
type conns struct {
	cfg     *pgx.ConnConfig
	slots   chan struct{} // one per connection handed out or being made
	idleFor time.Duration
	mu      sync.Mutex
	idle    []*wconn
	shut    bool
}

// wconn is one session and the world statements prepared on it.
type wconn struct {
	conn   *pgx.Conn
	stmts  *knownStmts
	idleAt time.Time
	expiry *time.Timer // closes the session when it stays idle
}

const (
	// pingAfter: an idle session is checked before use (as pgxpool does),
	// so a restarted server costs a reconnect, not a failed copy.
	pingAfter = time.Second
	// idleFor: sessions idle longer are closed rather than reused.
	idleFor = 5 * time.Minute
)

func newConns(cfg *pgx.ConnConfig, size int) *conns {
	if size < 1 {
		size = 1
	}
	return &conns{cfg: cfg, slots: make(chan struct{}, size), idleFor: idleFor}
}

// acquire hands out an idle session or makes one, waiting for a free slot.
func (p *conns) acquire(ctx context.Context) (*wconn, error) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	for {
		c := p.pop()
		if c == nil {
			break
		}
		if c.conn.IsClosed() {
			closeConn(c.conn)
			continue
		}
		if time.Since(c.idleAt) > pingAfter {
			pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err := c.conn.PgConn().Ping(pctx)
			cancel()
			if err != nil {
				closeConn(c.conn)
				continue
			}
		}
		return c, nil
	}
	conn, err := pgx.ConnectConfig(ctx, p.cfg)
	if err != nil {
		<-p.slots
		return nil, err
	}
	return &wconn{conn: conn, stmts: &knownStmts{set: map[string]string{}}}, nil
}

func (p *conns) pop() *wconn {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.idle)
	if n == 0 {
		return nil
	}
	c := p.idle[n-1]
	p.idle = p.idle[:n-1]
	c.expiry.Stop()
	return c
}

// expire closes c if it is still idle (pop took it otherwise).
func (p *conns) expire(c *wconn) {
	p.mu.Lock()
	i := slices.Index(p.idle, c)
	if i >= 0 {
		p.idle = slices.Delete(p.idle, i, i+1)
	}
	p.mu.Unlock()
	if i >= 0 {
		closeConn(c.conn)
	}
}

// release takes a session back; one that may carry anything of the last
// copy (keep false), is in a transaction or is closed is closed instead.
func (p *conns) release(c *wconn, keep bool) {
	defer func() { <-p.slots }()
	if keep && !c.conn.IsClosed() && c.conn.PgConn().TxStatus() == 'I' {
		p.mu.Lock()
		if !p.shut {
			c.idleAt = time.Now()
			p.idle = append(p.idle, c)
			c.expiry = time.AfterFunc(p.idleFor, func() { p.expire(c) })
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
	}
	closeConn(c.conn)
}

// close closes the idle sessions; sessions handed out are closed as they
// come back.
func (p *conns) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.shut = nil, true
	p.mu.Unlock()
	for _, c := range idle {
		c.expiry.Stop()
		closeConn(c.conn)
	}
}

func closeConn(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = conn.Close(ctx)
}

// sessionConfig is the application pool's connection settings (host, TLS,
// database) for another login role. A context that ends mid-statement
// sends the server a cancel request, so a statement past its wall-clock
// deadline stops even when the session has turned its statement_timeout
// off; a session that still does not answer is closed. A session that turns
// out to be a superuser's is refused at connect.
func sessionConfig(pool *pgxpool.Pool, role, password string, opts Options) *pgx.ConnConfig {
	cfg := pool.Config().ConnConfig.Copy()
	cfg.User, cfg.Password = role, password
	params := map[string]string{}
	for k, v := range cfg.RuntimeParams {
		params[k] = v
	}
	params["TimeZone"] = "UTC"
	params["statement_timeout"] = strconv.FormatInt(opts.StatementTimeout.Milliseconds(), 10)
	params["idle_in_transaction_session_timeout"] = strconv.FormatInt((opts.Deadline + time.Minute).Milliseconds(), 10)
	cfg.RuntimeParams = params
	cfg.MaxProtocolMessageBodyLen = int(opts.MaxResultBytes)
	cfg.BuildContextWatcherHandler = func(pc *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: pc, DeadlineDelay: 3 * time.Second}
	}
	also := cfg.ValidateConnect // target_session_attrs, when the URL has it
	cfg.ValidateConnect = func(ctx context.Context, pc *pgconn.PgConn) error {
		if pc.ParameterStatus("is_superuser") != "off" || pc.ParameterStatus("session_authorization") != role {
			return &PrivilegeError{Role: role, Has: []string{"a session that is not the role's own, or a superuser's"}}
		}
		if also != nil {
			return also(ctx, pc)
		}
		return nil
	}
	return cfg
}

// PrivilegeError is a world role that can do more than its world needs:
// the database was not set up (docs/SECURITY.md), or someone granted it
// more since. No copy runs as such a role.
type PrivilegeError struct {
	Role string
	Has  []string
}

func (e *PrivilegeError) Error() string {
	return fmt.Sprintf("world role %s has privileges it must not have (%v); run the setup in docs/SECURITY.md on this database", e.Role, e.Has)
}
