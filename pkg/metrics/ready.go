package metrics

import "github.com/prometheus/client_golang/prometheus"

// NewReady is suitegen_ready{role}: 1 while ready returns nil, else 0, asked
// at every scrape. It is what /readyz answers, as a series, so an alert can
// see writers that run but cannot work (the probe only tells Kubernetes).
// A nil ready is always ready.
func NewReady(role string, ready func() error) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace:   Namespace,
		Name:        "ready",
		Help:        "1 while the process is ready to work (what /readyz answers 200 to), else 0.",
		ConstLabels: prometheus.Labels{"role": role},
	}, func() float64 {
		if ready != nil && ready() != nil {
			return 0
		}
		return 1
	})
}
