package metrics

import (
	"context"
	"io"
	"log"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
	"github.com/kubediagnose/kubectl-diagnose/test/testbed/promtest"
)

func deployment(ns, name string, lbls, annotations map[string]string) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls, Annotations: annotations}}
}

// TestReadRealPrometheus runs the source against a real Prometheus scraping counters whose
// rates the test sets: each origin of a query (annotation, config rule, default list) finds
// its series, a workload without one has none, and a query the server refuses is said so.
func TestReadRealPrometheus(t *testing.T) {
	exp := promtest.StartExporter(t)
	exp.SetRate("readings_accepted_total", "dev", "ingester-7d9f8c6b5-x2x9k", 40)
	exp.SetRate("readings_accepted_total", "dev", "ingester-7d9f8c6b5-q8z7w", 20)
	// A Deployment named ingester-canary must not be counted as ingester.
	exp.SetRate("readings_accepted_total", "dev", "ingester-canary-5c4b3a2d1-abcde", 1000)
	// Nor the copies of a DaemonSet named ingester-agent: name, then one generated segment.
	exp.SetRate("readings_accepted_total", "dev", "ingester-agent-x2x9k", 1000)
	exp.SetRate("http_requests_total", "dev", "web-6f5d4c8b2-h7j6k", 12)
	// Asked in one batched query with web, each must get its own series back.
	exp.SetRate("http_requests_total", "dev", "web-api-7c8d9f2g4-m5n4p", 300)
	exp.SetRate("http_requests_total", "prod", "web-5b6c7d8f9-r5s6t", 900)
	exp.SetRate("jobs_done_total", "dev", "worker-0", 3)
	exp.SetGrowth("queue_depth", "dev", "worker-0", 5)
	prom := promtest.StartPrometheus(t, exp.Addr)

	snap := &snapshot.Snapshot{
		Deployments: []*appsv1.Deployment{
			deployment("dev", "ingester", nil, map[string]string{
				AnnotationThroughput:     `sum(rate(readings_accepted_total{namespace="$namespace",pod=~"$pods"}[5s]))`,
				AnnotationThroughputUnit: "readings/s",
			}),
			deployment("dev", "web", nil, nil),
			deployment("dev", "web-api", nil, nil),
			deployment("prod", "web", nil, nil),
			deployment("dev", "quiet", nil, nil),
			deployment("dev", "broken", nil, map[string]string{AnnotationThroughput: `sum(rate(x[5s]`}),
		},
		StatefulSets: []*appsv1.StatefulSet{{ObjectMeta: metav1.ObjectMeta{Namespace: "dev", Name: "worker", Labels: map[string]string{"team": "batch"}}}},
	}
	sel, err := labels.Parse("team=batch")
	if err != nil {
		t.Fatal(err)
	}
	src, err := New(Config{URL: prom.URL, Window: time.Minute, Step: time.Second, Rules: []Rule{{
		Selector: sel, Throughput: `sum(rate(jobs_done_total{namespace="$namespace",pod=~"$pods"}[5s]))`, ThroughputUnit: "jobs/s",
		Backlog: `sum(queue_depth{namespace="$namespace",pod=~"$pods"})`, BacklogUnit: "jobs",
	}}})
	if err != nil {
		t.Fatal(err)
	}
	// Wait for enough scrapes that a 5s rate and the default 2m rate are defined.
	deadline := time.Now().Add(30 * time.Second)
	for {
		snap.Metrics, snap.Visibility = nil, nil
		snap.ReferenceTime = time.Now()
		src.Read(context.Background(), snap)
		if n := len(snap.Metrics.Series); n == 6 && len(snap.MetricsFor("Deployment", "dev", "ingester", snapshot.RoleThroughput).Samples) >= 8 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("series after 30s: %+v, visibility %v", snap.Metrics.Series, snap.Visibility)
		}
		time.Sleep(time.Second)
	}

	tests := []struct {
		kind, name string
		role       snapshot.MetricRole
		origin     snapshot.QueryOrigin
		unit       string
		want       float64
	}{
		{"Deployment", "ingester", snapshot.RoleThroughput, snapshot.OriginAnnotation, "readings/s", 60},
		// The default queries rate over 2m, which a few seconds of scrapes only start to fill.
		{"Deployment", "web", snapshot.RoleThroughput, snapshot.OriginDefault, "requests/s", 0},
		{"StatefulSet", "worker", snapshot.RoleThroughput, snapshot.OriginConfig, "jobs/s", 3},
	}
	// The batch split: a 2m rate over a few seconds of scrapes reads low, but in proportion.
	web, api := snap.MetricsFor("Deployment", "dev", "web", snapshot.RoleThroughput), snap.MetricsFor("Deployment", "dev", "web-api", snapshot.RoleThroughput)
	if pw := snap.MetricsFor("Deployment", "prod", "web", snapshot.RoleThroughput); web == nil || api == nil || pw == nil {
		t.Errorf("batched default query: web %v web-api %v prod/web %v, want a series each", web != nil, api != nil, pw != nil)
	} else {
		w, a, p := web.Samples[len(web.Samples)-1].Value, api.Samples[len(api.Samples)-1].Value, pw.Samples[len(pw.Samples)-1].Value
		if a < 10*w || p < 2*a || !strings.Contains(api.Query, `pod=~"web-api-[bcdfghjklmnpqrstvwxz2456789]{6,10}-[bcdfghjklmnpqrstvwxz2456789]{5}"`) || !strings.Contains(pw.Query, `namespace="prod"`) {
			t.Errorf("batched default query mixed the workloads up: web %.2f web-api %.2f prod/web %.2f (%s)", w, a, p, api.Query)
		}
	}
	for _, tt := range tests {
		m := snap.MetricsFor(tt.kind, "dev", tt.name, tt.role)
		if m == nil {
			t.Errorf("%s/%s: no %s series", tt.kind, tt.name, tt.role)
			continue
		}
		if m.Origin != tt.origin || m.Unit != tt.unit {
			t.Errorf("%s/%s: origin %s unit %q, want %s %q", tt.kind, tt.name, m.Origin, m.Unit, tt.origin, tt.unit)
		}
		if strings.Contains(m.Query, "$") || !strings.Contains(m.Query, `namespace="dev"`) {
			t.Errorf("%s/%s: query %q keeps a placeholder", tt.kind, tt.name, m.Query)
		}
		last := m.Samples[len(m.Samples)-1].Value
		if (tt.want == 0 && last <= 0) || (tt.want > 0 && math.Abs(last-tt.want) > tt.want*0.25) {
			t.Errorf("%s/%s: last sample %.2f, want about %.0f (query %s)", tt.kind, tt.name, last, tt.want, m.Query)
		}
		if got, err := Samples(m.Result); err != nil || len(got) != len(m.Samples) {
			t.Errorf("%s/%s: the saved result gives %d samples (%v), the series has %d", tt.kind, tt.name, len(got), err, len(m.Samples))
		}
	}
	if b := snap.MetricsFor("StatefulSet", "dev", "worker", snapshot.RoleBacklog); b == nil || b.Unit != "jobs" || b.Samples[len(b.Samples)-1].Value <= b.Samples[0].Value {
		t.Errorf("worker backlog: %+v, want a rising series in jobs", b)
	}
	if m := snap.MetricsFor("Deployment", "dev", "quiet", snapshot.RoleThroughput); m != nil {
		t.Errorf("quiet: a series from %q, want none (no metric of it exists)", m.Query)
	}
	var refused int
	for _, v := range snap.Visibility {
		if v.Kind == VisibilityKind && v.Namespace == "dev" && strings.Contains(v.Reason, "deployment/broken") && strings.Contains(v.Reason, "refused") {
			refused++
		}
	}
	if refused != 1 || len(snap.Visibility) != 1 {
		t.Errorf("visibility = %v, want one entry for deployment/broken's refused query", snap.Visibility)
	}
}

// TestReadUnreachable: a server that is not there, or does not answer in time, is one
// visibility entry, and the read returns within a timeout or so, not one per workload.
func TestReadUnreachable(t *testing.T) {
	var calls atomic.Int32
	slow := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer slow.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()

	for _, tt := range []struct{ name, url, want string }{
		{"nothing listens", closedURL, "connection refused"},
		{"too slow", slow.URL, "no answer within 300ms"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src, err := New(Config{URL: tt.url, Timeout: 300 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			snap := &snapshot.Snapshot{ReferenceTime: time.Now()}
			for i := range 50 {
				snap.Deployments = append(snap.Deployments, deployment("dev", "w"+string(rune('a'+i%26))+string(rune('a'+i/26)), nil, nil))
			}
			start := time.Now()
			src.Read(context.Background(), snap)
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("read took %s, want about one timeout", took)
			}
			if snap.Metrics == nil || len(snap.Metrics.Series) != 0 {
				t.Errorf("metrics = %+v, want configured and empty", snap.Metrics)
			}
			if len(snap.Visibility) != 1 || snap.Visibility[0].Kind != VisibilityKind || !strings.Contains(snap.Visibility[0].Reason, tt.want) ||
				!strings.Contains(snap.Visibility[0].Reason, tt.url) {
				t.Errorf("visibility = %v, want one Prometheus entry saying %q", snap.Visibility, tt.want)
			}
		})
	}
	if n := calls.Load(); n > 1 {
		t.Errorf("the slow server was asked %d times, want once", n)
	}
}

// recordedMatrix is a range query answer as Prometheus 2.42 writes it.
const recordedMatrix = `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1764583200,"12.5"],[1764583230,"13"]]}]}}`

// TestReadCredentials: the bearer token and the basic auth password are read from their files
// and sent; TLS verification uses the CA file.
func TestReadCredentials(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	passFile := filepath.Join(dir, "pass")
	if err := os.WriteFile(tokenFile, []byte("s3cret-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(passFile, []byte("hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var got atomic.Value
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/api/v1/query" {
			_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1764583230,"1"]}]}}`))
			return
		}
		_, _ = w.Write([]byte(recordedMatrix))
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake below is expected
	srv.StartTLS()
	defer srv.Close()
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, pemOf(t, srv), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"bearer", Config{BearerTokenFile: tokenFile}, "Bearer s3cret-token"},
		{"basic", Config{Username: "ops", PasswordFile: passFile}, "Basic b3BzOmh1bnRlcjI="},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.URL, cfg.TLS.CAFile = srv.URL, caFile
			src, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			snap := &snapshot.Snapshot{ReferenceTime: time.Unix(1764583230, 0), Deployments: []*appsv1.Deployment{deployment("dev", "web", nil, nil)}}
			src.Read(context.Background(), snap)
			if len(snap.Visibility) != 0 {
				t.Fatalf("visibility = %v", snap.Visibility)
			}
			if h, _ := got.Load().(string); h != tt.want {
				t.Errorf("Authorization = %q, want %q", h, tt.want)
			}
			m := snap.MetricsFor("Deployment", "dev", "web", snapshot.RoleThroughput)
			if m == nil || len(m.Samples) != 2 || m.Samples[1].Value != 13 || m.Origin != snapshot.OriginDefault {
				t.Errorf("series = %+v, want the recorded two samples from the first default query", m)
			}
		})
	}
	// Without the CA the server's certificate is refused, and that is said.
	src, err := New(Config{URL: srv.URL, BearerTokenFile: tokenFile})
	if err != nil {
		t.Fatal(err)
	}
	snap := &snapshot.Snapshot{ReferenceTime: time.Now()}
	src.Read(context.Background(), snap)
	if len(snap.Visibility) != 1 || !strings.Contains(snap.Visibility[0].Reason, "certificate") {
		t.Errorf("visibility = %v, want the certificate refused", snap.Visibility)
	}
}

func TestValidate(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no url", Config{}, "no Prometheus URL"},
		{"not http", Config{URL: "ftp://x"}, "invalid Prometheus URL"},
		{"user in url", Config{URL: "http://u:p@x:9090"}, "not in the URL"},
		{"token and basic", Config{URL: "http://x", BearerTokenFile: "t", Username: "u", PasswordFile: "p"}, "cannot be used together"},
		{"user without password", Config{URL: "http://x", Username: "u"}, "both a username and a password file"},
		{"cert without key", Config{URL: "http://x", TLS: TLS{CertFile: "c"}}, "both a cert file and a key file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestBatchable(t *testing.T) {
	for tmpl, want := range map[string]bool{
		DefaultQueries[0].Template:                                                                                      true,
		`sum(rate(x{namespace="$namespace",pod=~"$pods"}[2m])) / 2`:                                                     false,
		`sum(rate(x{namespace="$namespace",pod=~"$pods",job="$workload"}[2m]))`:                                         false,
		`rate(x{namespace="$namespace",pod=~"$pods"}[2m])`:                                                              false,
		`sum(rate(x{namespace="$namespace"}[2m]))`:                                                                      false,
		`sum(rate(a{namespace="$namespace",pod=~"$pods"}[2m])) + sum(rate(b{namespace="$namespace",pod=~"$pods"}[2m]))`: false,
	} {
		if got := batchable(tmpl); got != want {
			t.Errorf("batchable(%s) = %v, want %v", tmpl, got, want)
		}
	}
}

// TestReadHostileServer: an answer that is not the API's JSON, or that never ends, is one
// visibility entry, not a crash or memory exhausted.
func TestReadHostileServer(t *testing.T) {
	for _, tt := range []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"not JSON", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`<html>login</html>`))
		}, "throughput and backlog not read"},
		{"an answer without end", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[`))
			chunk := []byte(strings.Repeat(`{"metric":{},"value":[1,"1"]},`, 1<<12))
			for range (maxBody / len(chunk)) + 2 {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}, "answer larger than 64 MiB"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			src, err := New(Config{URL: srv.URL, Timeout: 20 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			snap := &snapshot.Snapshot{ReferenceTime: time.Now(), Deployments: []*appsv1.Deployment{deployment("dev", "web", nil, nil)}}
			src.Read(context.Background(), snap)
			if len(snap.Visibility) != 1 || !strings.Contains(snap.Visibility[0].Reason, tt.want) {
				t.Errorf("visibility = %v, want one entry saying %q", snap.Visibility, tt.want)
			}
		})
	}
}

func TestValidateResolution(t *testing.T) {
	c := Config{URL: "http://p:9090", Window: 24 * time.Hour, Step: time.Second}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "86400 points per series; Prometheus answers at most 11000") {
		t.Errorf("Validate() = %v", err)
	}
	c.Step = 0 // the default step keeps any window within the limit
	if err := c.Validate(); err != nil {
		t.Errorf("Validate() with the default step = %v", err)
	}
}
