package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

// sameAsWriteJSON fails t unless write writes v as writeJSON (encoding/json, indentJSON,
// escapeJSON, the whole document at once) writes it, error for error, and writes nothing when
// writeJSON fails.
func sameAsWriteJSON[T any](t testing.TB, what string, v T, write func(io.Writer, T) error) {
	t.Helper()
	var want, got bytes.Buffer
	wantErr := writeJSON(&want, v)
	gotErr := write(&got, v)
	if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
		t.Fatalf("%s: printer error %v, writeJSON error %v", what, gotErr, wantErr)
	}
	if wantErr != nil {
		if got.Len() != 0 {
			t.Fatalf("%s: printer failed with %v after writing %d bytes; writeJSON writes none", what, gotErr, got.Len())
		}
		return
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("%s: printer and writeJSON differ %s", what, firstDifference(got.Bytes(), want.Bytes()))
	}
}

// firstDifference shows where two documents part.
func firstDifference(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(i-200, 0)
	return fmt.Sprintf("at byte %d of %d (want %d):\n got: %q\nwant: %q", i, len(got), len(want),
		got[from:min(i+100, len(got))], want[from:min(i+100, len(want))])
}

// TestPrintersWriteEveryField fills every field of every type under a Report and a ReportList
// (pointers set, lists and maps of two, omitempty fields present, strings that
// need escaping) and holds the printers, which write a workload at a time, to encoding/json on
// the whole document. The zero and the empty fills hold them to null for nil, [] and {} for
// empty, and the omitempty fields left out.
func TestPrintersWriteEveryField(t *testing.T) {
	for _, mode := range []struct {
		name string
		mode genMode
	}{{"full", genFull}, {"zero", genZero}, {"empty", genEmpty}} {
		t.Run(mode.name, func(t *testing.T) {
			g := &reportGen{mode: mode.mode}
			r := g.report()
			if mode.mode == genFull {
				if missed := unfilled(reflect.ValueOf(r), "Report"); len(missed) > 0 {
					t.Fatalf("the full fill left fields zero, so their writing goes untested: %v", missed)
				}
			}
			sameAsWriteJSON(t, "report", r, writeReportJSON)
			l := new(ReportList)
			g.fill(reflect.ValueOf(l).Elem())
			if mode.mode == genFull && len(l.Items) > 0 {
				l.Items[1] = nil // a nil item is null, as encoding/json writes it
			}
			sameAsWriteJSON(t, "report list", l, writeReportListJSON)
		})
	}
}

// TestPrintersFailAsWriteJSON sets each time and float of a full report, one at a time, to
// a value encoding/json refuses; the printer must fail with the same error and write nothing.
func TestPrintersFailAsWriteJSON(t *testing.T) {
	r := (&reportGen{mode: genFull}).report()
	root := reflect.ValueOf(r).Elem()
	times, floats := leaves(root, timeType), leaves(root, reflect.TypeFor[float64]())
	if len(times) < 10 || len(floats) < 10 {
		t.Fatalf("found %d times and %d floats in a full report; the walk is stale", len(times), len(floats))
	}
	for i, v := range times {
		for _, bad := range genBadTimes {
			old := v.Interface()
			v.Set(reflect.ValueOf(bad))
			sameAsWriteJSON(t, fmt.Sprintf("time %d = %v", i, bad), r, writeReportJSON)
			v.Set(reflect.ValueOf(old))
		}
	}
	for i, v := range floats {
		for _, bad := range genBadFloats {
			old := v.Float()
			v.SetFloat(bad)
			sameAsWriteJSON(t, fmt.Sprintf("float %d = %v", i, bad), r, writeReportJSON)
			v.SetFloat(old)
		}
	}
}

// TestPrintersOnRandomReports holds the printers (normalizing first) to writeJSON on reports
// generated at random, invalid values among them.
func TestPrintersOnRandomReports(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 2026))
	n := 300
	if testing.Short() {
		n = 100
	}
	for i := range n {
		g := &reportGen{choose: rng.IntN, invalid: i%3 == 0}
		r := g.report()
		var got, want bytes.Buffer
		gotErr := jsonPrinter{}.PrintReport(&got, r)
		wantErr := writeJSON(&want, normalize(r))
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("report %d: printer (err %v) and writeJSON (err %v) differ %s", i, gotErr, wantErr, firstDifference(got.Bytes(), want.Bytes()))
		}
		secs := []Section{{Context: "a", Report: r}, {Context: "b", Report: g.report()}}
		got.Reset()
		want.Reset()
		gotErr = jsonPrinter{}.PrintFleet(&got, secs)
		wantErr = writeJSON(&want, List(secs))
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("fleet %d: printer (err %v) and writeJSON (err %v) differ %s", i, gotErr, wantErr, firstDifference(got.Bytes(), want.Bytes()))
		}
		if len(r.Workloads) > 0 {
			d := &r.Workloads[0]
			got.Reset()
			want.Reset()
			gotErr = PrintDiagnosis(&got, d, "json")
			n := normalizeDiagnosis(*d)
			wantErr = writeJSON(&want, &n)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("diagnosis %d: printer (err %v) and writeJSON (err %v) differ %s", i, gotErr, wantErr, firstDifference(got.Bytes(), want.Bytes()))
			}
		}
	}
}

// FuzzPrintJSON lets the fuzzer drive the fill: its bytes choose the shape of the report and
// supply raw strings (go test -fuzz FuzzPrintJSON ./internal/report).
func FuzzPrintJSON(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x01\x02\x03\x04<&>\xff\xfe\u2028"))
	f.Add(bytes.Repeat([]byte{4, 3, 2, 1, 0, 0xff, 0x80, '"'}, 64))
	f.Fuzz(func(t *testing.T, data []byte) {
		next := func() byte {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return b
		}
		g := &reportGen{
			choose:  func(n int) int { return int(next()) % n },
			invalid: true,
			raw: func() string {
				n := min(int(next()), len(data))
				s := string(data[:n])
				data = data[n:]
				return s
			},
		}
		sameAsWriteJSON(t, "report", normalize(g.report()), writeReportJSON)
	})
}

// TestPrintersLargeReport holds the json printer to writeJSON past many flushes, on the
// benchmark's report.
func TestPrintersLargeReport(t *testing.T) {
	r := largeReport(300)
	sameAsWriteJSON(t, "large report", normalize(r), writeReportJSON)
}

// TestPrintersReturnTheWriteError fails the writer before, at and after the printers' first
// flushes: the error comes back, and no write follows the failed one.
func TestPrintersReturnTheWriteError(t *testing.T) {
	r := largeReport(50)
	for _, p := range []Printer{jsonPrinter{}, yamlPrinter{}} {
		var full bytes.Buffer
		if err := p.PrintReport(&full, r); err != nil {
			t.Fatal(err)
		}
		if full.Len() < 4*printBuffer {
			t.Fatalf("%T: the report is %d bytes, too few for several flushes", p, full.Len())
		}
		for _, room := range []int{0, printBuffer - 1, printBuffer + 10, full.Len() / 2, full.Len() - 1} {
			w := &countingShortWriter{shortWriter: shortWriter{room: room}}
			err := p.PrintReport(w, r)
			if !errors.Is(err, errDiskFull) {
				t.Errorf("%T with room for %d of %d bytes: err = %v, want %v", p, room, full.Len(), err, errDiskFull)
			}
			if w.afterFailure > 0 {
				t.Errorf("%T with room for %d: %d writes after the failed one", p, room, w.afterFailure)
			}
		}
	}
}

type countingShortWriter struct {
	shortWriter
	failed       bool
	afterFailure int
}

func (w *countingShortWriter) Write(p []byte) (int, error) {
	if w.failed {
		w.afterFailure++
	}
	n, err := w.shortWriter.Write(p)
	w.failed = w.failed || err != nil
	return n, err
}

// largeReport is n workloads shaped as the 20,000-pod benchmark dump's (about 35 KB of JSON
// each: a hundred evidence items, a timeline), a suspect and a throughput series on some.
func largeReport(n int) *diagnose.Report {
	at := time.Date(2026, 11, 24, 12, 29, 53, 0, time.UTC)
	r := &diagnose.Report{
		APIVersion: diagnose.APIVersion, Kind: diagnose.ReportKind, ReferenceTime: at,
		Summary: map[diagnose.Shape]int{diagnose.ShapeHealthy: n / 2, diagnose.ShapeProgressing: n - n/2},
	}
	r.Source.Type = "dump"
	r.Source.Path = "/tmp/kubectl-diagnose-scale/dir"
	for i := range n {
		name := fmt.Sprintf("app-%04d", i)
		young, old := int64(86+i), int64(702744)
		d := diagnose.Diagnosis{
			Kind: "Deployment", Namespace: fmt.Sprintf("team-%03d", i/100), Name: name,
			Shape: diagnose.ShapeProgressing, Counts: diagnose.Counts{Declared: 4, Existing: 10, Serving: 7, Restarts: 1},
			YoungestCopySeconds: &young, OldestCopySeconds: &old,
			Headline: "10 copies exist for 4 declared · 7 serving — rollout of revision 2 under way inside its deadline",
			Cause:    diagnose.CauseUnknown,
			Fix:      "wait for the rollout; check `kubectl rollout status deployment/" + name + "`",
		}
		seen := at.Add(-time.Duration(i) * time.Second)
		d.Evidence = append(d.Evidence, diagnose.Evidence{
			Kind: "NotReady", Message: "Running, not Ready: containers with unready status: [recommender]", Source: diagnose.SourcePodStatus,
			Objects: []string{"Pod/" + name + "-5d8f7c9b4-00000", "Pod/" + name + "-5d8f7c9b4-00007"}, Count: 2,
		}, diagnose.Evidence{
			Kind: "Unhealthy", Message: "Readiness probe failed: HTTP probe failed with statuscode: 503", Source: diagnose.SourceEvent,
			Objects: []string{"Pod/" + name + "-5d8f7c9b4-00002"}, Count: 10, LastSeen: &seen,
		})
		for j := range 100 {
			svc := fmt.Sprintf("app-%04d", j)
			d.Evidence = append(d.Evidence, diagnose.Evidence{
				Kind: "NoEndpointSlices", Message: "no EndpointSlice of Service " + svc + " in the snapshot; Ready copies were counted as serving",
				Source: diagnose.SourceVisibility, Objects: []string{"Service/" + svc}, Count: 1,
			})
		}
		for j := range 4 {
			d.Timeline = append(d.Timeline, diagnose.TimelineEntry{
				At: at.Add(-time.Duration(j) * time.Hour), Kind: "revision",
				Message: "revision 2 rolled out; served (copy " + name + "-5d8f7c9b4-00001 is Ready)", Object: "ReplicaSet/" + name + "-5d8f7c9b4",
			})
		}
		if i%10 == 0 {
			d.Suspects = []diagnose.Suspect{{Rule: "image-not-found", Object: "Deployment/" + name, Value: "registry.example/x:1", Confidence: diagnose.ConfidenceHigh, Reason: `pull failed: "not found" <&>`}}
			d.Revisions = &diagnose.Revisions{Current: name + "-5d8f7c9b4", LastServing: name + "-7f6d5c4b3", ChangedPaths: []string{"spec.template.spec.containers[0].image"}}
			cur := 12.5
			tp := &diagnose.Throughput{Query: `sum(rate(http_requests_total{namespace="x"}[5m]))`, Origin: "default", Unit: "req/s", Current: &cur, Verdict: diagnose.VerdictSteady}
			for k := range 30 {
				tp.Samples = append(tp.Samples, diagnose.MetricSample{Time: at.Add(-time.Duration(k) * time.Minute), Value: math.Round(float64(k)*1.37*100) / 100})
			}
			d.Throughput = tp
		}
		r.Workloads = append(r.Workloads, d)
	}
	return r
}

// BenchmarkPrintJSON writes a report of 2,000 workloads (about 70 MB, as the 20,000-pod stress
// dump's audit was before its Services without slices were one item each; 13 MB now) as the
// json printer does (a workload at a time) and as writeJSON does (the whole document).
func BenchmarkPrintJSON(b *testing.B) {
	r := largeReport(2000)
	var full bytes.Buffer
	if err := (jsonPrinter{}).PrintReport(&full, r); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name  string
		print func(io.Writer) error
	}{
		{"printer", func(w io.Writer) error { return jsonPrinter{}.PrintReport(w, r) }},
		{"writeJSON", func(w io.Writer) error { return writeJSON(w, normalize(r)) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(full.Len()))
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				if err := bc.print(io.Discard); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// TestYAMLPrinterIsWriteYAML holds the yaml printer, which converts a workload at a time, to
// writeYAML converting the whole report: on every field filled, zero and empty, on random
// reports (strings with line breaks, long strings the encoder folds, invalid values) and on a
// large report.
func TestYAMLPrinterIsWriteYAML(t *testing.T) {
	same := func(what string, r *diagnose.Report) {
		t.Helper()
		r = normalize(r)
		var got, want bytes.Buffer
		gotErr := writeReportYAML(&got, r)
		wantErr := writeYAML(&want, r)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("%s: printer error %v, writeYAML error %v", what, gotErr, wantErr)
		}
		if wantErr != nil && got.Len() != 0 {
			t.Fatalf("%s: printer failed with %v after writing %d bytes; writeYAML writes none", what, gotErr, got.Len())
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("%s: printer and writeYAML differ %s", what, firstDifference(got.Bytes(), want.Bytes()))
		}
	}
	for _, mode := range []genMode{genFull, genZero, genEmpty} {
		same(fmt.Sprintf("fill %d", mode), (&reportGen{mode: mode}).report())
	}
	rng := rand.New(rand.NewPCG(7, 2026))
	n := 100
	if testing.Short() {
		n = 30
	}
	for i := range n {
		r := (&reportGen{choose: rng.IntN, invalid: i%4 == 0}).report()
		if i%5 == 0 && len(r.Workloads) > 0 {
			r.Workloads[0].Headline = "first line\nsecond line\n\n  indented: yes\n"
			r.Workloads[0].Fix = strings.Repeat("a long fix that the encoder folds at its width ", 5)
		}
		same(fmt.Sprintf("random report %d", i), r)
	}
	same("large report", largeReport(40))
}

// BenchmarkPrintYAML writes a report of 200 workloads as the yaml printer does now (a
// workload at a time) and as it did (the whole report through writeYAML).
func BenchmarkPrintYAML(b *testing.B) {
	r := largeReport(200)
	for _, bc := range []struct {
		name  string
		print func(io.Writer) error
	}{
		{"printer", func(w io.Writer) error { return yamlPrinter{}.PrintReport(w, r) }},
		{"writeYAML", func(w io.Writer) error { return writeYAML(w, normalize(r)) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				if err := bc.print(io.Discard); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
