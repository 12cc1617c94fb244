package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

func TestMetricsFlags(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "metrics.yaml")
	if err := os.WriteFile(cfgFile, []byte(`prometheus:
  url: http://prometheus.monitoring:9090
  timeout: 4s
  window: 30m
queries:
  - namespace: dev
    selector: app.kubernetes.io/name=ingester
    throughput: sum(rate(readings_accepted_total{namespace="$namespace",pod=~"$pods"}[2m]))
    throughputUnit: readings/s
`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		argv    string
		check   func(t *testing.T, m *MetricsOptions)
		wantErr string
	}{
		{name: "no Prometheus", argv: "audit", check: func(t *testing.T, m *MetricsOptions) {
			if m.Config != nil {
				t.Errorf("Config = %+v, want nil", m.Config)
			}
		}},
		{
			name: "url, token and TLS", argv: "audit --prometheus https://prom:9090 --prometheus-bearer-token-file /run/token --prometheus-timeout 3s --prometheus-ca-file /ca.pem --prometheus-server-name prom.internal",
			check: func(t *testing.T, m *MetricsOptions) {
				c := m.Config
				if c == nil || c.URL != "https://prom:9090" || c.BearerTokenFile != "/run/token" || c.Timeout != 3*time.Second || c.TLS.CAFile != "/ca.pem" || c.TLS.ServerName != "prom.internal" {
					t.Errorf("Config = %+v", c)
				}
			},
		},
		{name: "the config file, a flag laid over it", argv: "audit --metrics-config " + cfgFile + " --prometheus-window 10m", check: func(t *testing.T, m *MetricsOptions) {
			c := m.Config
			if c == nil || c.URL != "http://prometheus.monitoring:9090" || c.Timeout != 4*time.Second || c.Window != 10*time.Minute || len(c.Rules) != 1 || c.Rules[0].ThroughputUnit != "readings/s" {
				t.Errorf("Config = %+v", c)
			}
		}},
		{name: "global flags before the subcommand", argv: "--prometheus http://p:9090 audit", check: func(t *testing.T, m *MetricsOptions) {
			if m.Config == nil || m.Config.URL != "http://p:9090" {
				t.Errorf("Config = %+v", m.Config)
			}
		}},
		{name: "not an http URL", argv: "audit --prometheus prom:9090", wantErr: `invalid Prometheus URL "prom:9090": want http://HOST:PORT or https://HOST:PORT`},
		{name: "credentials without a URL", argv: "audit --prometheus-bearer-token-file /t", wantErr: "Prometheus options given without a URL; set --prometheus or prometheus.url in --metrics-config"},
		{name: "token and basic auth", argv: "audit --prometheus http://p --prometheus-bearer-token-file /t --prometheus-username u --prometheus-password-file /p", wantErr: "a bearer token and basic auth cannot be used together"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := parseArgs(strings.Fields(tt.argv)...)
			if tt.wantErr != "" {
				checkUsageError(t, err, tt.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, &p.audit.Source.Metrics)
		})
	}
}

func TestMetricsConfigFileErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("prometheus:\n  url: http://p\n  timout: 3s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := parseArgs("audit", "--metrics-config", bad)
	if err == nil || !strings.Contains(err.Error(), `unknown field "timout"`) || ExitCode(err) != ExitError {
		t.Errorf("err = %v (exit %d), want the unknown field named, exit %d", err, ExitCode(err), ExitError)
	}
	_, err = parseArgs("audit", "--metrics-config", filepath.Join(dir, "missing.yaml"))
	if err == nil || !strings.Contains(err.Error(), "read metrics config") {
		t.Errorf("err = %v, want the unreadable file named", err)
	}
}

// TestAuditReplaysSavedMetrics: a dump with saved Prometheus answers replays them offline:
// the healthy checkout of dev-mixed whose output stopped is live-but-idle, and the JSON report
// carries the throughput section with the query that produced the number.
func TestAuditReplaysSavedMetrics(t *testing.T) {
	snap, err := dump.Read(scenarioDump("dev-mixed"), nil)
	if err != nil {
		t.Fatal(err)
	}
	end := snap.ReferenceTime
	var values []string
	for i := range 40 {
		v := "310"
		if i >= 25 {
			v = "0"
		}
		ts := end.Add(time.Duration(i-39) * 30 * time.Second).Unix()
		values = append(values, `[`+jsonNumber(ts)+`,"`+v+`"]`)
	}
	result := `[{"metric":{},"values":[` + strings.Join(values, ",") + `]}]`
	query := `sum(rate(http_requests_total{namespace="dev-mixed",pod=~"checkout-[a-z0-9]+-[a-z0-9]+"}[2m]))`
	snap.Metrics = &snapshot.Metrics{Source: "http://prometheus.test:9090", Series: []snapshot.MetricSeries{{
		Workload: snapshot.ObjectKey{Kind: "Deployment", Namespace: "dev-mixed", Name: "checkout"},
		Role:     snapshot.RoleThroughput, Origin: snapshot.OriginDefault, Template: "t", Query: query, Unit: "requests/s",
		Start: end.Add(-39 * 30 * time.Second), End: end, Step: 30 * time.Second, Result: json.RawMessage(result),
	}}}
	dir := filepath.Join(t.TempDir(), "dump")
	if err := dump.Write(dir, snap, false); err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, nil, hooks{}, "audit", "--dump", dir, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var r diagnose.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	d := r.Find("Deployment", "dev-mixed", "checkout")
	if d == nil || d.Shape != diagnose.ShapeLiveButIdle || d.Cause != diagnose.CauseDependency {
		t.Fatalf("checkout = %+v, want live-but-idle, dependency", d)
	}
	tp := d.Throughput
	if tp == nil || tp.Query != query || tp.Origin != "default" || tp.Unit != "requests/s" || len(tp.Samples) != 40 ||
		tp.Current == nil || *tp.Current != 0 || tp.Baseline == nil || *tp.Baseline != 310 {
		t.Errorf("throughput = %+v", tp)
	}
	if other := r.Find("Deployment", "dev-mixed", "batch-exporter"); other == nil || other.Throughput != nil {
		t.Errorf("batch-exporter has no saved series, got %+v", other)
	}
}

func jsonNumber(n int64) string { b, _ := json.Marshal(n); return string(b) }
