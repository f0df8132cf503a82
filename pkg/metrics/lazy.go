package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// The lazy instruments create their series on first use. They serve two
// cases where a series at zero would lie: the provider-bucket gauges of a
// process that has no provider (a planner's tokens_available of 0 would win
// the dashboard's min across processes), and the unbound ("" run) view of a
// process that serves many runs, which only ever records through For.

type lazyCounter struct {
	vec *prometheus.CounterVec
	lvs []string
}

func (l lazyCounter) c() prometheus.Counter               { return l.vec.WithLabelValues(l.lvs...) }
func (l lazyCounter) Inc()                                { l.c().Inc() }
func (l lazyCounter) Add(v float64)                       { l.c().Add(v) }
func (l lazyCounter) Desc() *prometheus.Desc              { return l.c().Desc() }
func (l lazyCounter) Write(m *dto.Metric) error           { return l.c().Write(m) }
func (l lazyCounter) Describe(ch chan<- *prometheus.Desc) { l.c().Describe(ch) }
func (l lazyCounter) Collect(ch chan<- prometheus.Metric) { l.c().Collect(ch) }

type lazyGauge struct {
	vec *prometheus.GaugeVec
	lvs []string
}

func (l lazyGauge) g() prometheus.Gauge                 { return l.vec.WithLabelValues(l.lvs...) }
func (l lazyGauge) Set(v float64)                       { l.g().Set(v) }
func (l lazyGauge) Inc()                                { l.g().Inc() }
func (l lazyGauge) Dec()                                { l.g().Dec() }
func (l lazyGauge) Add(v float64)                       { l.g().Add(v) }
func (l lazyGauge) Sub(v float64)                       { l.g().Sub(v) }
func (l lazyGauge) SetToCurrentTime()                   { l.g().SetToCurrentTime() }
func (l lazyGauge) Desc() *prometheus.Desc              { return l.g().Desc() }
func (l lazyGauge) Write(m *dto.Metric) error           { return l.g().Write(m) }
func (l lazyGauge) Describe(ch chan<- *prometheus.Desc) { l.g().Describe(ch) }
func (l lazyGauge) Collect(ch chan<- prometheus.Metric) { l.g().Collect(ch) }

type lazyHistogram struct {
	vec *prometheus.HistogramVec
	lvs []string
}

func (l lazyHistogram) h() prometheus.Histogram {
	return l.vec.WithLabelValues(l.lvs...).(prometheus.Histogram)
}
func (l lazyHistogram) Observe(v float64)                   { l.h().Observe(v) }
func (l lazyHistogram) Desc() *prometheus.Desc              { return l.h().Desc() }
func (l lazyHistogram) Write(m *dto.Metric) error           { return l.h().Write(m) }
func (l lazyHistogram) Describe(ch chan<- *prometheus.Desc) { l.h().Describe(ch) }
func (l lazyHistogram) Collect(ch chan<- prometheus.Metric) { l.h().Collect(ch) }
