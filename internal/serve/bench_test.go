package serve

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
	"github.com/kubediagnose/kubectl-diagnose/test/testbed/fleetsim"
)

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// fleet clones every scenario dump's namespaces until the snapshot holds pods pods.
func fleet(b *testing.B, pods int) *snapshot.Snapshot {
	b.Helper()
	dirs, err := filepath.Glob(filepath.Join("..", "..", "testdata", "scenarios", "*", "dump"))
	if err != nil || len(dirs) == 0 {
		b.Fatalf("scenario dumps: %v", err)
	}
	var srcs []*snapshot.Snapshot
	for _, d := range dirs {
		s, err := dump.Read(d, nil)
		if err != nil {
			b.Fatal(err)
		}
		srcs = append(srcs, s)
	}
	return fleetsim.Clone(srcs, pods)
}

// BenchmarkScrape20kPods measures one scrape of /metrics over the report of 20,000 pods
// (every scenario's namespaces cloned): the bytes served, the series, and the heap the server
// holds (snapshot and report) between scrapes.
func BenchmarkScrape20kPods(b *testing.B) {
	s := fleet(b, 20000)
	// The machine is shared: CPU time says what the engine costs, wall time what it waited.
	cpu0, start := cpuTime(b), time.Now()
	r := diagnose.Diagnose(s)
	took, cpu := time.Since(start), cpuTime(b)-cpu0
	p := &Picture{}
	p.Update(r, took)
	h := Handler(p, NewCollector(p, time.Now), io.Discard, Options{})

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	heap := ms.HeapInuse
	runtime.KeepAlive(s)

	var body string
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		if rec.Code != http.StatusOK {
			b.Fatalf("/metrics: %d", rec.Code)
		}
		body = rec.Body.String()
	}
	b.StopTimer()
	series, ours := 0, 0
	for _, line := range strings.Split(body, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		series++
		if strings.HasPrefix(line, Namespace+"_") {
			ours++
		}
	}
	b.ReportMetric(float64(len(s.Pods)), "pods")
	b.ReportMetric(float64(len(r.Workloads)), "workloads")
	b.ReportMetric(float64(series), "series")
	b.ReportMetric(float64(ours), "kubectl_diagnose_series")
	b.ReportMetric(float64(len(body)), "metrics-bytes")
	b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
	b.ReportMetric(took.Seconds(), "diagnose-s")
	b.ReportMetric(cpu.Seconds(), "diagnose-cpu-s")
	if dir := os.Getenv("FLEET_DUMP"); dir != "" {
		// hack/serve-bench.sh measures the binary on the same cluster.
		if err := dump.Write(dir, s, false); err != nil {
			b.Fatal(err)
		}
	}
}
