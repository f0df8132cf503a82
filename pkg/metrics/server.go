package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// ShutdownTimeout bounds how long Serve waits for in-flight scrapes when its
// context ends.
const ShutdownTimeout = 5 * time.Second

// NewRegistry returns a registry holding the Go runtime and process
// collectors, the usual base for a process's Metrics.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Handler serves reg in the Prometheus exposition format.
func Handler(reg prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Mux returns the routes Serve exposes: /metrics, /healthz (200 while the
// process runs) and /readyz (200 when ready returns nil, else 503 with its
// error). A nil ready means always ready.
func Mux(reg prometheus.Gatherer, ready func() error) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", Handler(reg))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if ready != nil {
			if err := ready(); err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				fmt.Fprintf(w, "not ready: %v\n", err)
				return
			}
		}
		fmt.Fprintln(w, "ready")
	})
	return mux
}

// Serve listens on addr and serves Mux(reg, ready) until ctx ends, then shuts
// down gracefully. It returns nil after a shutdown caused by ctx.
func Serve(ctx context.Context, addr string, reg *prometheus.Registry, ready func() error) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("metrics: listen %s: %w", addr, err)
	}
	return ServeListener(ctx, ln, reg, ready)
}

// ServeListener is Serve on a listener the caller opened (useful with ":0"
// to learn the port first). It closes ln.
func ServeListener(ctx context.Context, ln net.Listener, reg prometheus.Gatherer, ready func() error) error {
	if err := ServeHandler(ctx, ln, Mux(reg, ready)); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}

// ServeHandler serves h on ln until ctx ends, then shuts down, waiting at
// most ShutdownTimeout for requests in flight; nil after such a shutdown.
// Every HTTP surface of a process (metrics, progress) is served this way.
func ServeHandler(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	if serveErr := <-errc; serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return fmt.Errorf("serve %s: %w", ln.Addr(), serveErr)
	}
	if err != nil {
		return fmt.Errorf("shutdown %s: %w", ln.Addr(), err)
	}
	return nil
}
