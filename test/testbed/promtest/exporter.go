package promtest

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// tick is how often the exporter moves its series; well under the scrape interval, so a rate
// reads smoothly.
const tick = 100 * time.Millisecond

type seriesKey struct{ metric, namespace, pod string }

// Exporter serves /metrics with counters and gauges, labelled by namespace and pod, that move
// at the rates the test sets.
type Exporter struct {
	// Addr is host:port of the exporter.
	Addr string

	mu       sync.Mutex
	reg      *prometheus.Registry
	counters map[string]*prometheus.CounterVec
	gauges   map[string]*prometheus.GaugeVec
	rates    map[seriesKey]float64
	growth   map[seriesKey]float64
}

// StartExporter starts an exporter on loopback; t.Cleanup stops it.
func StartExporter(t testing.TB) *Exporter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("exporter: %v", err)
	}
	e := &Exporter{
		Addr: ln.Addr().String(), reg: prometheus.NewRegistry(),
		counters: map[string]*prometheus.CounterVec{}, gauges: map[string]*prometheus.GaugeVec{},
		rates: map[seriesKey]float64{}, growth: map[seriesKey]float64{},
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("exporter: %v", err)
		}
	}()
	go func() {
		defer close(done)
		e.run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		_ = srv.Close() // a test server; its connections go with it
	})
	return e
}

// SetRate makes counter metric{namespace, pod} grow by perSecond each second from now on (0
// stops it). The series exists, at 0, from the first call.
func (e *Exporter) SetRate(metric, namespace, pod string, perSecond float64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.counter(metric).WithLabelValues(namespace, pod).Add(0)
	e.rates[seriesKey{metric, namespace, pod}] = perSecond
}

// SetGrowth makes gauge metric{namespace, pod} change by perSecond each second (a queue that
// grows, or drains when negative).
func (e *Exporter) SetGrowth(metric, namespace, pod string, perSecond float64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.gauge(metric).WithLabelValues(namespace, pod).Add(0)
	e.growth[seriesKey{metric, namespace, pod}] = perSecond
}

func (e *Exporter) counter(metric string) *prometheus.CounterVec {
	c, ok := e.counters[metric]
	if !ok {
		c = prometheus.NewCounterVec(prometheus.CounterOpts{Name: metric, Help: "A counter the test drives."}, []string{"namespace", "pod"})
		e.reg.MustRegister(c) // a name registered twice is a bug in the test
		e.counters[metric] = c
	}
	return c
}

func (e *Exporter) gauge(metric string) *prometheus.GaugeVec {
	g, ok := e.gauges[metric]
	if !ok {
		g = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: metric, Help: "A gauge the test drives."}, []string{"namespace", "pod"})
		e.reg.MustRegister(g) // a name registered twice is a bug in the test
		e.gauges[metric] = g
	}
	return g
}

func (e *Exporter) run(ctx context.Context) {
	t := time.NewTicker(tick)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			dt := now.Sub(last).Seconds()
			last = now
			e.mu.Lock()
			for k, r := range e.rates {
				if r > 0 {
					e.counters[k.metric].WithLabelValues(k.namespace, k.pod).Add(r * dt)
				}
			}
			for k, g := range e.growth {
				e.gauges[k.metric].WithLabelValues(k.namespace, k.pod).Add(g * dt)
			}
			e.mu.Unlock()
		}
	}
}
