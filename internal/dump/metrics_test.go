package dump

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// recordedRange is a range query's data.result as Prometheus 2.42 returned it: two series,
// which the snapshot sums per timestamp.
const recordedRange = `[{"metric":{"pod":"telemetry-ingester-7d9f8c6b5-x2x9k"},"values":[[1764583200,"620"],[1764583230,"0"]]},` +
	`{"metric":{"pod":"telemetry-ingester-7d9f8c6b5-q8z7w"},"values":[[1764583200,"620"],[1764583230,"0"]]}]`

func TestWriteMetricsRoundTrip(t *testing.T) {
	orig := readScenario(t, "dev-ingester")
	start := time.Unix(1764583200, 0).UTC()
	orig.Metrics = &snapshot.Metrics{Source: "http://127.0.0.1:9090", Series: []snapshot.MetricSeries{{
		Workload: snapshot.ObjectKey{Kind: "Deployment", Namespace: "dev-ingester", Name: "telemetry-ingester"},
		Role:     snapshot.RoleThroughput, Origin: snapshot.OriginAnnotation,
		Template: `sum by (pod) (rate(readings_accepted_total{namespace="$namespace",pod=~"$pods"}[2m]))`,
		Query:    `sum by (pod) (rate(readings_accepted_total{namespace="dev-ingester",pod=~"telemetry-ingester-[a-z0-9]+-[a-z0-9]+"}[2m]))`,
		Unit:     "readings/s", Start: start, End: start.Add(30 * time.Second), Step: 30 * time.Second,
		Result: json.RawMessage(recordedRange),
	}}}
	dir := filepath.Join(t.TempDir(), "out")
	if err := Write(dir, orig, false); err != nil {
		t.Fatalf("Write: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(dir, MetricsFile))
	if err != nil {
		t.Fatalf("metrics file: %v", err)
	}
	// The answer is kept as the API wrote it, not re-encoded as samples.
	if !strings.Contains(string(data), `"telemetry-ingester-7d9f8c6b5-q8z7w"`) || !strings.Contains(string(data), `"620"`) {
		t.Errorf("metrics file lacks the recorded result:\n%s", data)
	}
	again, err := Read(dir, nil)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if again.Metrics == nil || len(again.Metrics.Series) != 1 {
		t.Fatalf("metrics read back = %+v, want one series", again.Metrics)
	}
	got := again.Metrics.Series[0]
	want := orig.Metrics.Series[0]
	want.Samples = []snapshot.Sample{{Time: start, Value: 1240}, {Time: start.Add(30 * time.Second), Value: 0}}
	got.Result, want.Result = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("series read back\n%+v\nwant\n%+v", got, want)
	}
	if again.Metrics.Source != orig.Metrics.Source {
		t.Errorf("source = %q", again.Metrics.Source)
	}
	if _, ok := again.Source.Skipped["MetricsDump"]; ok {
		t.Error("the metrics document was counted as a skipped kind")
	}
	if diff := differences(orig, again); len(diff) > 0 {
		t.Errorf("the objects read back differently in %v", diff)
	}
}

func TestWriteWithoutMetricsSourceWritesNoMetricsFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if err := Write(dir, readScenario(t, "dev-ingester"), false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, MetricsFile)); !os.IsNotExist(err) {
		t.Errorf("metrics file written without a metrics source: %v", err)
	}
	again, err := Read(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again.Metrics != nil {
		t.Errorf("metrics = %+v, want nil", again.Metrics)
	}
}

func TestReadMetricsErrors(t *testing.T) {
	base := `{"apiVersion":"kubediagnose.dev/v1alpha1","kind":"MetricsDump","source":"x","queries":[%s]}`
	for _, tt := range []struct{ name, query, want string }{
		{"bad step", `{"role":"throughput","step":"soon","result":[]}`, "queries[0].step"},
		{"bad result", `{"role":"throughput","step":"30s","result":{"x":1}}`, "read range result"},
		{"unknown role", `{"role":"latency","step":"30s","result":[]}`, `unknown role "latency"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc := strings.Replace(base, "%s", tt.query, 1)
			_, err := ReadBytes("m.json", []byte(doc))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
