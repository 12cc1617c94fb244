package dump

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// scaleDeployments and scaleCopies size the benchmark cluster of issue 12: 2,000 Deployments of
// 10 copies each (20,000 pods), 100 Deployments per namespace.
const (
	scaleDeployments = 2000
	scaleCopies      = 10
	scalePerNS       = 100
)

// scaleSnapshot builds a 20,000-pod cluster from the objects of the dev-mixed scenario, which
// an API server wrote: each Deployment gets its ReplicaSet, its copies, a Service, an
// EndpointSlice and Events, renamed and given their own UIDs. logLines > 0 gives every tenth
// copy a log tail of that many lines. perNS Deployments share a namespace.
func scaleSnapshot(tb testing.TB, deployments, perNS, logLines int) *snapshot.Snapshot {
	tb.Helper()
	src, err := Read(filepath.Join(scenarioDir, "dev-mixed", "dump"), nil)
	if err != nil {
		tb.Fatal(err)
	}
	out := &snapshot.Snapshot{Nodes: src.Nodes}
	uid := func(kind string, i, j int) types.UID {
		return types.UID(fmt.Sprintf("%08x-%04x-4000-8000-%012x", i, len(kind), j))
	}
	for d := 0; d < deployments; d++ {
		ns := fmt.Sprintf("team-%03d", d/perNS)
		name := fmt.Sprintf("app-%04d", d)
		dep := src.Deployments[d%len(src.Deployments)].DeepCopy()
		dep.Name, dep.Namespace, dep.UID = name, ns, uid("Deployment", d, 0)
		out.Deployments = append(out.Deployments, dep)
		rs := src.ReplicaSets[d%len(src.ReplicaSets)].DeepCopy()
		rs.Name, rs.Namespace, rs.UID = name+"-5d8f7c9b4", ns, uid("ReplicaSet", d, 0)
		for i := range rs.OwnerReferences {
			rs.OwnerReferences[i].Name, rs.OwnerReferences[i].UID = dep.Name, dep.UID
		}
		out.ReplicaSets = append(out.ReplicaSets, rs)
		svc := src.Services[d%len(src.Services)].DeepCopy()
		svc.Name, svc.Namespace, svc.UID = name, ns, uid("Service", d, 0)
		out.Services = append(out.Services, svc)
		es := src.EndpointSlices[d%len(src.EndpointSlices)].DeepCopy()
		es.Name, es.Namespace, es.UID = name+"-x7k2p", ns, uid("EndpointSlice", d, 0)
		out.EndpointSlices = append(out.EndpointSlices, es)
		for c := 0; c < scaleCopies; c++ {
			p := src.Pods[(d*scaleCopies+c)%len(src.Pods)].DeepCopy()
			p.Name, p.Namespace, p.UID = fmt.Sprintf("%s-5d8f7c9b4-%05d", name, c), ns, uid("Pod", d, c)
			for i := range p.OwnerReferences {
				p.OwnerReferences[i].Name, p.OwnerReferences[i].UID = rs.Name, rs.UID
			}
			out.Pods = append(out.Pods, p)
			ev := src.Events[(d*scaleCopies+c)%len(src.Events)].DeepCopy()
			ev.Name, ev.Namespace, ev.UID = p.Name+".187a6b2c3d4e5f60", ns, uid("Event", d, c)
			ev.InvolvedObject.Name, ev.InvolvedObject.Namespace, ev.InvolvedObject.UID = p.Name, ns, p.UID
			out.Events = append(out.Events, ev)
			if logLines > 0 && c == 0 && len(p.Spec.Containers) > 0 {
				l := snapshot.ContainerLog{Namespace: ns, Pod: p.Name, Container: p.Spec.Containers[0].Name}
				for k := 0; k < logLines; k++ {
					l.Lines = append(l.Lines, fmt.Sprintf(`{"level":"info","ts":"2026-11-24T14:%02d:%02d.%03dZ","msg":"served request","path":"/api/v1/orders/%d","status":200,"duration_ms":%d}`, k/60%60, k%60, k%1000, k, k%97))
				}
				out.Logs = append(out.Logs, l)
			}
		}
	}
	return out
}

// scaleDumps are the benchmark dumps, written once per test binary: the directory Write
// writes (the layout of kubectl cluster-info dump --output-directory, and of kubectl-diagnose
// dump) and the same lists concatenated into one file, as kubectl cluster-info dump writes to
// standard output.
type scaleDumps struct {
	dir, stream string
	bytes       int64 // of the directory's JSON files
}

var (
	scaleOnce sync.Once
	scale     scaleDumps
	scaleErr  error
)

// scaleDump writes the benchmark dumps under $KUBEDIAGNOSE_SCALE_DIR once; a complete dump
// found there is reused. Without the variable the scale benchmarks are skipped, so that
// make bench stays quick and leaves no 600 MB behind.
func scaleDump(tb testing.TB) scaleDumps {
	tb.Helper()
	root := scaleRoot(tb)
	scaleOnce.Do(func() {
		scale = scaleDumps{dir: filepath.Join(root, "dir"), stream: filepath.Join(root, "cluster-info-dump.json")}
		if _, err := os.Stat(filepath.Join(root, "complete")); err != nil {
			scaleErr = writeScale(tb, root)
		}
		if scaleErr == nil {
			scale.bytes, scaleErr = jsonBytes(scale.dir)
		}
	})
	if scaleErr != nil {
		tb.Fatal(scaleErr)
	}
	return scale
}

func scaleRoot(tb testing.TB) string {
	root := os.Getenv("KUBEDIAGNOSE_SCALE_DIR")
	if root == "" {
		tb.Skip("set KUBEDIAGNOSE_SCALE_DIR to a directory for the 20,000-pod benchmark dump (600 MB)")
	}
	return root
}

func writeScale(tb testing.TB, root string) error {
	if err := os.RemoveAll(root); err != nil {
		return err
	}
	if err := Write(scale.dir, scaleSnapshot(tb, scaleDeployments, scalePerNS, 0), false); err != nil {
		return err
	}
	out, err := os.Create(scale.stream)
	if err != nil {
		return err
	}
	defer func() { _ = out.Close() }()
	files, err := dumpFiles(scale.dir)
	if err != nil {
		return err
	}
	for _, f := range files {
		in, err := os.Open(f)
		if err != nil {
			return err
		}
		_, err = io.Copy(out, in)
		_ = in.Close()
		if err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(root, "complete"), nil, 0o600)
}

// dumpFiles lists a dump directory's files in walk order.
func dumpFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		// Hidden files (Write's manifest) are not read as part of the dump.
		if err == nil && !info.IsDir() && !strings.HasPrefix(info.Name(), ".") {
			files = append(files, p)
		}
		return err
	})
	sort.Strings(files)
	return files, err
}

func jsonBytes(dir string) (int64, error) {
	files, err := dumpFiles(dir)
	var n int64
	for _, f := range files {
		if strings.HasSuffix(f, ".json") {
			info, err := os.Stat(f)
			if err != nil {
				return 0, err
			}
			n += info.Size()
		}
	}
	return n, err
}

// TestWriteScaleDump writes the benchmark dump to $KUBEDIAGNOSE_SCALE_DIR for
// hack/bench-dump.sh, which times the built binary and Python on it.
func TestWriteScaleDump(t *testing.T) {
	d := scaleDump(t)
	t.Logf("%s: %d bytes of JSON", d.dir, d.bytes)
}

// BenchmarkReadScale reads the 20,000-pod dump: the directory, the same directory with -n of
// one namespace of twenty, and the single-file stream.
func BenchmarkReadScale(b *testing.B) {
	d := scaleDump(b)
	info, err := os.Stat(d.stream)
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name  string
		path  string
		opts  Options
		bytes int64
	}{
		{"dir", d.dir, Options{}, d.bytes},
		{"dir-n", d.dir, Options{Namespace: "team-007", Namespaces: []string{"team-007"}}, d.bytes},
		{"stream", d.stream, Options{}, info.Size()},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(c.bytes)
			b.ReportAllocs()
			var kept *snapshot.Snapshot
			for b.Loop() {
				s, err := ReadContext(b.Context(), c.path, nil, c.opts)
				if err != nil {
					b.Fatal(err)
				}
				if want := scaleDeployments * scaleCopies; c.opts.Namespaces == nil && len(s.Pods) != want {
					b.Fatalf("read %d pods, want %d", len(s.Pods), want)
				}
				kept = s
			}
			// The heap the snapshot holds, the bytes of the objects kept, against which the
			// reader's peak is measured.
			b.StopTimer()
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			b.ReportMetric(float64(m.HeapAlloc)/1e6, "MB-kept")
			runtime.KeepAlive(kept)
		})
	}
}
