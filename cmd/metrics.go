package cmd

import (
	"context"
	"slices"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubediagnose/kubectl-diagnose/internal/metrics"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// MetricsOptions are the Prometheus flags: where the workloads' own output is read. Flags
// override the config file's values.
type MetricsOptions struct {
	URL             string
	ConfigFile      string
	Timeout         time.Duration
	Window          time.Duration
	Step            time.Duration
	BearerTokenFile string
	Username        string
	PasswordFile    string
	CAFile          string
	CertFile        string
	KeyFile         string
	ServerName      string
	Insecure        bool
	// Refresh is how often the live console reads Prometheus again.
	Refresh time.Duration

	// Config is the completed configuration; nil when no Prometheus is configured.
	Config *metrics.Config
}

// AddFlags binds the Prometheus flags.
func (m *MetricsOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&m.URL, "prometheus", "", "Prometheus base URL to read each workload's throughput and backlog from (read-only: instant and range queries).")
	fs.StringVar(&m.ConfigFile, "metrics-config", "", "YAML file with the Prometheus settings and label-selector rules mapping workloads to throughput and backlog queries.")
	fs.DurationVar(&m.Timeout, "prometheus-timeout", 0, "Timeout of each Prometheus query (default 10s).")
	fs.DurationVar(&m.Window, "prometheus-window", 0, "How far back before the reference time the range queries read (default 1h).")
	fs.DurationVar(&m.Step, "prometheus-step", 0, "Resolution of the range queries (default: the window / 120, at least 1s).")
	fs.StringVar(&m.BearerTokenFile, "prometheus-bearer-token-file", "", "File holding a bearer token for Prometheus, read on every request.")
	fs.StringVar(&m.Username, "prometheus-username", "", "Basic auth user for Prometheus; needs --prometheus-password-file.")
	fs.StringVar(&m.PasswordFile, "prometheus-password-file", "", "File holding the basic auth password for Prometheus.")
	fs.StringVar(&m.CAFile, "prometheus-ca-file", "", "CA certificate file that verifies the Prometheus server.")
	fs.StringVar(&m.CertFile, "prometheus-cert-file", "", "Client certificate file for Prometheus (with --prometheus-key-file).")
	fs.StringVar(&m.KeyFile, "prometheus-key-file", "", "Client key file for Prometheus.")
	fs.StringVar(&m.ServerName, "prometheus-server-name", "", "Server name to verify the Prometheus certificate against.")
	fs.BoolVar(&m.Insecure, "prometheus-insecure-skip-tls-verify", false, "Do not verify the Prometheus server's certificate (insecure).")
	fs.DurationVar(&m.Refresh, "prometheus-refresh", 30*time.Second, "How often the live console reads Prometheus again.")
}

// Complete reads the config file, lays the flags over it and validates the result; with
// neither --prometheus nor a config file naming a URL it leaves Config nil.
func (m *MetricsOptions) Complete() error {
	m.Config = nil
	var c metrics.Config
	if m.ConfigFile != "" {
		var err error
		if c, err = metrics.LoadFile(m.ConfigFile); err != nil {
			return err
		}
	}
	over := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	over(&c.URL, m.URL)
	over(&c.BearerTokenFile, m.BearerTokenFile)
	over(&c.Username, m.Username)
	over(&c.PasswordFile, m.PasswordFile)
	over(&c.TLS.CAFile, m.CAFile)
	over(&c.TLS.CertFile, m.CertFile)
	over(&c.TLS.KeyFile, m.KeyFile)
	over(&c.TLS.ServerName, m.ServerName)
	c.TLS.InsecureSkipVerify = c.TLS.InsecureSkipVerify || m.Insecure
	for _, d := range []struct {
		dst *time.Duration
		v   time.Duration
	}{{&c.Timeout, m.Timeout}, {&c.Window, m.Window}, {&c.Step, m.Step}} {
		if d.v != 0 {
			*d.dst = d.v
		}
	}
	if m.Refresh < 0 {
		return usageErrorf("--prometheus-refresh must be positive, got %s", m.Refresh)
	}
	if m.Refresh == 0 {
		m.Refresh = 30 * time.Second
	}
	if c.URL == "" {
		if m.ConfigFile != "" || m.BearerTokenFile != "" || m.Username != "" || m.CAFile != "" {
			return usageErrorf("Prometheus options given without a URL; set --prometheus or prometheus.url in --metrics-config")
		}
		return nil
	}
	if err := c.Validate(); err != nil {
		return usageErrorf("%v", err)
	}
	m.Config = &c
	return nil
}

// source builds the Prometheus source; nil when none is configured.
func (m *MetricsOptions) source() (*metrics.Source, error) {
	if m.Config == nil {
		return nil, nil
	}
	return metrics.New(*m.Config)
}

// metricsSource adds the workloads' throughput and backlog to every snapshot of a source.
type metricsSource struct {
	src  snapshot.Source
	prom *metrics.Source
}

// Snapshot reads the source, then Prometheus at the snapshot's reference time; Prometheus'
// own failures are visibility entries of the snapshot.
func (m metricsSource) Snapshot(ctx context.Context) (*snapshot.Snapshot, error) {
	snap, err := m.src.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	m.prom.Read(ctx, snap)
	return snap, nil
}

// liveWrap returns what adds the Prometheus readings to a live watch: the watch itself when no
// Prometheus is configured.
func (m *MetricsOptions) liveWrap() (func(func(ctx context.Context) (<-chan *snapshot.Snapshot, <-chan error)) func(ctx context.Context) (<-chan *snapshot.Snapshot, <-chan error), error) {
	prom, err := m.source()
	if err != nil {
		return nil, err
	}
	return func(watch func(ctx context.Context) (<-chan *snapshot.Snapshot, <-chan error)) func(ctx context.Context) (<-chan *snapshot.Snapshot, <-chan error) {
		if prom == nil {
			return watch
		}
		return watchWithMetrics(prom, m.Refresh, watch)
	}, nil
}

// withMetrics wraps src when a Prometheus is configured.
func (m *MetricsOptions) withMetrics(src snapshot.Source) (snapshot.Source, error) {
	prom, err := m.source()
	if err != nil || prom == nil {
		return src, err
	}
	return metricsSource{src: src, prom: prom}, nil
}

// watchWithMetrics attaches the newest Prometheus reading to every snapshot a live watch
// sends, reads Prometheus again every interval in the background, and sends the last snapshot
// again with each new reading, so a quiet cluster's console still sees its output change. A
// Prometheus that fails is the reading's visibility entry; the watch goes on.
func watchWithMetrics(prom *metrics.Source, interval time.Duration, watch func(ctx context.Context) (<-chan *snapshot.Snapshot, <-chan error)) func(ctx context.Context) (<-chan *snapshot.Snapshot, <-chan error) {
	return func(ctx context.Context) (<-chan *snapshot.Snapshot, <-chan error) {
		in, errs := watch(ctx)
		out := make(chan *snapshot.Snapshot, 1)
		go func() {
			defer close(out)
			tick := time.NewTicker(interval)
			defer tick.Stop()
			var last, reading *snapshot.Snapshot
			done := make(chan *snapshot.Snapshot, 1)
			read := func(s *snapshot.Snapshot) {
				// Only what choosing queries reads; the watch's snapshot stays untouched.
				shell := &snapshot.Snapshot{ReferenceTime: time.Now(), Deployments: s.Deployments, StatefulSets: s.StatefulSets, DaemonSets: s.DaemonSets}
				reading = shell
				go func() {
					prom.Read(ctx, shell)
					done <- shell
				}()
			}
			var cur *snapshot.Snapshot
			send := func(s *snapshot.Snapshot) bool {
				c := *s
				if cur != nil {
					c.Metrics = cur.Metrics
					c.Visibility = append(slices.Clone(s.Visibility), cur.Visibility...)
				}
				select {
				case out <- &c:
					return true
				case <-ctx.Done():
					return false
				}
			}
			for {
				select {
				case <-ctx.Done():
					return
				case s, ok := <-in:
					if !ok {
						return
					}
					last = s
					if cur == nil && reading == nil {
						read(s)
					}
					if !send(s) {
						return
					}
				case r := <-done:
					cur, reading = r, nil
					if last != nil && !send(last) {
						return
					}
				case <-tick.C:
					if reading == nil && last != nil {
						read(last)
					}
				}
			}
		}()
		return out, errs
	}
}
