package cli

import (
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// version is set by the build: -ldflags "-X github.com/suitegen/suitegen/pkg/cli.version=v1.2.3".
var version string

// Version is the build's version: the one the build set, else the module
// version or VCS revision Go recorded, else "devel".
func Version() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		return "devel-" + rev + dirty
	}
	return "devel"
}

// buildInfo is suitegen_build_info: 1, labelled with what was built.
func buildInfo(role string) prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "suitegen_build_info",
		Help:        "Always 1; its labels say which build of suitegen this process runs.",
		ConstLabels: prometheus.Labels{"version": Version(), "goversion": runtime.Version(), "role": role},
	})
	g.Set(1)
	return g
}

// logFlags takes --log-format and --log-level (and their -x, x=v forms)
// out of args, wherever they are before a "--", and builds the logger they
// and SUITEGEN_LOG_FORMAT, SUITEGEN_LOG_LEVEL and SUITEGEN_DEBUG ask for.
func logFlags(args []string, getenv func(string) string, w io.Writer) ([]string, *slog.Logger, error) {
	format, level := getenv("SUITEGEN_LOG_FORMAT"), getenv("SUITEGEN_LOG_LEVEL")
	fromEnv := map[string]bool{"format": format != "", "level": level != ""}
	if level == "" && getenv("SUITEGEN_DEBUG") != "" {
		level = "debug"
	}
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || (name != "log-format" && name != "log-level") {
			rest = append(rest, a)
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return nil, nil, fmt.Errorf("flag needs an argument: -%s", name)
			}
			i++
			val = args[i]
		}
		if name == "log-format" {
			format, fromEnv["format"] = val, false
		} else {
			level, fromEnv["level"] = val, false
		}
	}
	var lv slog.Level
	switch strings.ToLower(level) {
	case "", "info":
		lv = slog.LevelInfo
	case "debug":
		lv = slog.LevelDebug
	case "warn", "warning":
		lv = slog.LevelWarn
	case "error":
		lv = slog.LevelError
	default:
		return nil, nil, fmt.Errorf("%s %q is not debug, info, warn or error", source(fromEnv["level"], "SUITEGEN_LOG_LEVEL", "--log-level"), level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch strings.ToLower(format) {
	case "", "text":
		return rest, slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return rest, slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, nil, fmt.Errorf("%s %q is not text or json", source(fromEnv["format"], "SUITEGEN_LOG_FORMAT", "--log-format"), format)
}

func source(env bool, envName, flag string) string {
	if env {
		return envName
	}
	return flag
}
