package report

import (
	"bytes"
	"encoding/json"
	"io"
	"sort"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

// printReport writes r to w in format with the default options.
func printReport(w io.Writer, r *diagnose.Report, format string) error {
	p, err := NewPrinter(format, Options{})
	if err != nil {
		return err
	}
	return p.PrintReport(w, r)
}

// TestPrint compares every format with its golden file (go test ./internal/report -update).
func TestPrint(t *testing.T) {
	for _, format := range Formats {
		t.Run(format, func(t *testing.T) {
			p, err := NewPrinter(format, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := p.PrintReport(&buf, sampleReport()); err != nil {
				t.Fatal(err)
			}
			golden.RequireEqual(t, buf.Bytes())
		})
	}
}

func TestPrintExplain(t *testing.T) {
	for _, d := range []diagnose.Diagnosis{ingester(), gateway(), healthy()[2]} {
		t.Run(d.Name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := PrintExplain(&buf, &d); err != nil {
				t.Fatal(err)
			}
			golden.RequireEqual(t, buf.Bytes())
		})
	}
}

func TestTableOneNamespaceHasNoNamespaceColumn(t *testing.T) {
	r := sampleReport()
	r.Workloads = healthy()
	var buf bytes.Buffer
	if err := printReport(&buf, r, "table"); err != nil {
		t.Fatal(err)
	}
	header, _, _ := strings.Cut(buf.String(), "\n")
	if strings.Contains(header, "NAMESPACE") {
		t.Errorf("one namespace, header %q should have no NAMESPACE column", header)
	}
	if got := strings.Fields(header); strings.Join(got, " ") != "SHAPE WORKLOAD COPIES SERVING YOUNGEST RESTARTS SUSPECT CAUSE" {
		t.Errorf("header = %q", header)
	}
}

func TestTableWorstFirst(t *testing.T) {
	var buf bytes.Buffer
	if err := printReport(&buf, sampleReport(), "table"); err != nil {
		t.Fatal(err)
	}
	var shapes []int
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n")[1:] {
		shapes = append(shapes, diagnose.Shape(strings.Fields(line)[0]).Severity())
	}
	if !sort.IntsAreSorted(shapes) {
		t.Errorf("rows are not worst first:\n%s", buf.String())
	}
}

func TestNoEscapeSequencesInHumanFormats(t *testing.T) {
	for _, format := range []string{"table", "wide", "markdown"} {
		var buf bytes.Buffer
		if err := printReport(&buf, sampleReport(), format); err != nil {
			t.Fatal(err)
		}
		if strings.ContainsRune(buf.String(), 0x1b) {
			t.Errorf("%s output carries an escape character", format)
		}
	}
	var buf bytes.Buffer
	d := ingester()
	if err := PrintExplain(&buf, &d); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsRune(buf.String(), 0x1b) {
		t.Error("explain output carries an escape character")
	}
}

func TestNewPrinterUnknownFormat(t *testing.T) {
	_, err := NewPrinter("xml", Options{})
	want := `unknown output format "xml"; use one of table, wide, json, yaml, markdown, name, jsonpath=..., jsonpath-as-json=..., jsonpath-file=..., custom-columns=..., go-template=..., go-template-file=...`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
	if err := PrintDiagnosis(&bytes.Buffer{}, &diagnose.Diagnosis{}, "wide"); err == nil {
		t.Error("explain accepted -o wide")
	}
}

// TestJSONKeys holds the JSON document to exactly the key names of the documented schema.
func TestJSONKeys(t *testing.T) {
	for _, format := range []string{"json", "yaml"} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			if err := printReport(&buf, sampleReport(), format); err != nil {
				t.Fatal(err)
			}
			b := buf.Bytes()
			if format == "yaml" {
				var err error
				if b, err = yaml.YAMLToJSON(b); err != nil {
					t.Fatal(err)
				}
			}
			var doc map[string]any
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			wantKeys(t, "report", doc, "apiVersion", "kind", "referenceTime", "source", "visibility", "summary", "sharedDependencies", "workloads")
			if doc["apiVersion"] != "kubediagnose.dev/v1alpha1" || doc["kind"] != "Report" {
				t.Errorf("apiVersion/kind = %v/%v", doc["apiVersion"], doc["kind"])
			}
			ws := doc["workloads"].([]any)
			var ing map[string]any
			for _, w := range ws {
				w := w.(map[string]any)
				wantKeys(t, "workload", w, "kind", "namespace", "name", "shape", "counts", "youngestCopySeconds",
					"oldestCopySeconds", "headline", "cause", "argument", "suspects", "evidence", "revisions", "signalGaps", "fix", "timeline", "waived")
				wantKeys(t, "counts", w["counts"].(map[string]any), "declared", "existing", "serving", "restarts")
				if _, ok := w["suspects"].([]any); !ok {
					t.Errorf("%s: suspects is %v, want a list", w["name"], w["suspects"])
				}
				if w["name"] == "telemetry-ingester" {
					ing = w
				}
			}
			s := ing["suspects"].([]any)[0].(map[string]any)
			wantKeys(t, "suspect", s, "rule", "object", "path", "value", "previousValue", "element", "confidence", "reason")
			if s["path"] != "spec.template.spec.containers[0].env[0].value" || s["element"] != "INGEST_ENDPOINT" {
				t.Errorf("suspect path, element = %v, %v", s["path"], s["element"])
			}
			wantKeys(t, "evidence", ing["evidence"].([]any)[0].(map[string]any), "kind", "message", "source", "objects", "count", "lastSeen")
			wantKeys(t, "revisions", ing["revisions"].(map[string]any), "current", "lastServing", "changedPaths")
			wantKeys(t, "signalGap", ing["signalGaps"].([]any)[0].(map[string]any), "object", "path", "message")
		})
	}
}

func wantKeys(t *testing.T, what string, m map[string]any, keys ...string) {
	t.Helper()
	var got []string
	for k := range m {
		got = append(got, k)
	}
	sort.Strings(got)
	sort.Strings(keys)
	if strings.Join(got, ",") != strings.Join(keys, ",") {
		t.Errorf("%s keys = %v, want %v", what, got, keys)
	}
}

func TestPrintDoesNotMutateReport(t *testing.T) {
	r := sampleReport()
	r.Workloads[3].Evidence[1].Objects = nil
	for _, format := range Formats {
		if err := printReport(&bytes.Buffer{}, r, format); err != nil {
			t.Fatal(err)
		}
	}
	if r.Workloads[3].Evidence[1].Objects != nil || r.Workloads[0].Suspects != nil {
		t.Error("printing changed the report")
	}
}

func TestShortSuspect(t *testing.T) {
	ctr := podSpec.Child("containers").Index(0)
	tests := []struct {
		name    string
		object  string
		path    *field.Path
		element string
		want    string
	}{
		{"image", "", ctr.Child("image"), "", "image"},
		{"env value named by its element", "", ctr.Child("env").Index(0).Child("value"), "INGEST_ENDPOINT", "env INGEST_ENDPOINT"},
		{"env value the engine could not name", "", ctr.Child("env").Index(0).Child("value"), "", "env[0]"},
		{"env index beyond the template", "", ctr.Child("env").Index(4).Child("value"), "", "env[4]"},
		{"secret key", "", ctr.Child("env").Index(1).Child("valueFrom", "secretKeyRef", "key"), "", "env[1] secret key"},
		{"configMap name", "", ctr.Child("env").Index(1).Child("valueFrom", "configMapKeyRef", "name"), "", "env[1] configMap"},
		{"envFrom configMap", "", ctr.Child("envFrom").Index(0).Child("configMapRef", "name"), "", "envFrom configMap"},
		{"memory limit in key notation", "", ctr.Child("resources", "limits").Key("memory"), "", "memory limit"},
		{"memory limit in dot notation", "", ctr.Child("resources", "limits", "memory"), "", "memory limit"},
		{"cpu request", "", ctr.Child("resources", "requests").Key("cpu"), "", "cpu request"},
		{"readiness path", "", ctr.Child("readinessProbe", "httpGet", "path"), "", "readiness probe path"},
		{"liveness port", "", ctr.Child("livenessProbe", "httpGet", "port"), "", "liveness probe port"},
		{"container security setting", "", ctr.Child("securityContext", "readOnlyRootFilesystem"), "", "readOnlyRootFilesystem"},
		{"pod security setting", "", podSpec.Child("securityContext", "fsGroup"), "", "fsGroup"},
		{"command", "", ctr.Child("command"), "", "command"},
		{"args element", "", ctr.Child("args").Index(2), "", "args"},
		{"init container image", "", podSpec.Child("initContainers").Index(0).Child("image"), "", "init image"},
		{"volume named", "", podSpec.Child("volumes").Index(0).Child("configMap", "name"), "config", "volume config"},
		{"node affinity", "StatefulSet/search-indexer", podSpec.Child("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms").Index(0).Child("matchExpressions").Index(0).Child("values").Index(0), "", "node affinity"},
		{"nodeSelector with dotted key", "", podSpec.Child("nodeSelector").Key("topology.kubernetes.io/zone"), "", "nodeSelector"},
		{"imagePullSecrets", "DaemonSet/log-shipper", podSpec.Child("imagePullSecrets"), "", "imagePullSecrets"},
		{"storage class", "StatefulSet/search-indexer", field.NewPath("spec", "volumeClaimTemplates").Index(0).Child("spec", "storageClassName"), "", "volumeClaimTemplate storageClassName"},
		{"service selector", "Service/api-gateway", field.NewPath("spec", "selector"), "", "Service selector"},
		{"service targetPort", "Service/api-gateway", field.NewPath("spec", "ports").Index(0).Child("targetPort"), "", "Service targetPort"},
		{"quota", "ResourceQuota/compute", field.NewPath("spec", "hard").Key("pods"), "", "ResourceQuota hard[pods]"},
		{"workload field outside the template", "", field.NewPath("spec", "minReadySeconds"), "", "minReadySeconds"},
		{"a type says whose", "", field.NewPath("spec", "strategy", "type"), "", "strategy type"},
		{"a pod security type", "", podSpec.Child("securityContext", "seccompProfile", "type"), "", "seccompProfile type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := ingester()
			if tt.object != "" {
				kind, name, _ := strings.Cut(tt.object, "/")
				if kind != "Service" && kind != "ResourceQuota" {
					d.Kind, d.Name = kind, name
				}
			}
			obj := tt.object
			if obj == "" {
				obj = d.Kind + "/" + d.Name
			}
			d.Suspects = []diagnose.Suspect{{Object: obj, Path: tt.path, Element: tt.element}}
			if got := ShortSuspect(&d); got != tt.want {
				t.Errorf("ShortSuspect(%s) = %q, want %q", tt.path, got, tt.want)
			}
		})
	}
	if got := ShortSuspect(&diagnose.Diagnosis{}); got != "" {
		t.Errorf("no suspect: %q", got)
	}
}

func TestClean(t *testing.T) {
	tests := map[string]string{
		"plain":                         "plain",
		"red \x1b[31mtext\x1b[0m":       "red text",
		"title \x1b]0;pwned\x07 after":  "title  after",
		"osc st \x1b]52;c;Zm9v\x1b\\ok": "osc st ok",
		"line\nbreak\ttab":              "line break tab",
		"bell\x07 del\x7f c1\u009b":     "bell del c1",
		"ünïcode · ok":                  "ünïcode · ok",
		"dangling \x1b":                 "dangling ",
	}
	for in, want := range tests {
		if got := Clean(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestMarkdownCellsStayInTheirColumn: cluster text with pipes, backticks and line breaks must not
// add columns or rows to the markdown tables.
func TestMarkdownCellsStayInTheirColumn(t *testing.T) {
	r := sampleReport()
	d := ingester()
	d.Suspects[0].Reason = "logs say: a | b\nc `x`"
	d.Suspects[0].Value = "a|b`c"
	r.Workloads = []diagnose.Diagnosis{d}
	var buf bytes.Buffer
	if err := printReport(&buf, r, "markdown"); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(buf.String(), "\n") {
		if !strings.HasPrefix(line, "| 1 | Deployment/telemetry-ingester") {
			continue
		}
		cells := strings.Count(line, "|") - strings.Count(line, `\|`)
		if cells != 8 {
			t.Errorf("suspect row has %d unescaped pipes, want 8: %s", cells, line)
		}
		return
	}
	t.Fatalf("no suspect row in:\n%s", buf.String())
}

// TestCleanDropsWhatTheConsoleDropped: the console cleans through CleanTabs, so the printers get
// its stricter cases too: bidi controls, charset designations, invalid UTF-8, wide tabs.
func TestCleanDropsWhatTheConsoleDropped(t *testing.T) {
	tests := map[string]string{
		"bidi\u202egnp.exe":     "bidignp.exe",
		"isolate\u2066x\u2069y": "isolatexy",
		"charset \x1b(Bascii":   "charset ascii",
		"invalid \xff byte":     "invalid  byte",
		"raw c1 \x9b31mcsi":     "raw c1 csi",
		"keypad \x1b=mode":      "keypad mode",
		"crlf\r\nline":          "crlf  line",
	}
	for in, want := range tests {
		if got := Clean(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
	if got := CleanTabs("a\tb", 4); got != "a    b" {
		t.Errorf("CleanTabs with 4 = %q", got)
	}
	if got := CleanLines("one\r\ntwo\x1b[1m\tx\nthree", 2); strings.Join(got, "|") != "one|two  x|three" {
		t.Errorf("CleanLines = %q", got)
	}
}

// TestShortSuspectUsesValueAndElement: a flag is named with its value, a list element by the
// name the engine wrote in Suspect.Element, cleaned.
func TestShortSuspectUsesValueAndElement(t *testing.T) {
	ctr := podSpec.Child("containers").Index(0)
	cron := field.NewPath("spec", "jobTemplate", "spec", "template", "spec", "containers").Index(0)
	tests := []struct {
		name           string
		path           *field.Path
		value, element string
		want           string
	}{
		{"command element with its value", ctr.Child("command").Index(0), "/bin/ingest", "", "command /bin/ingest"},
		{"flag with its value", ctr.Child("args").Index(1), "-listen-adress=:8080", "", "args -listen-adress=:8080"},
		{"long flag cut", ctr.Child("args").Index(0), "--endpoint=" + strings.Repeat("x", 60), "", "args --endpoint=xxxxxxxxxxxxxxxxxxxx…"},
		{"envFrom configMap named", ctr.Child("envFrom").Index(0).Child("configMapRef", "name"), "", "ingest-settings", "envFrom configMap ingest-settings"},
		{"envFrom secret named", ctr.Child("envFrom").Index(1).Child("secretRef", "name"), "", "ingest-creds", "envFrom secret ingest-creds"},
		{"envFrom configMap the engine could not name", ctr.Child("envFrom").Index(0).Child("configMapRef", "name"), "", "", "envFrom configMap"},
		{"volume mount named", ctr.Child("volumeMounts").Index(1).Child("mountPath"), "", "spool", "volumeMount spool"},
		{"a CronJob's env var", cron.Child("env").Index(0).Child("value"), "", "LEDGER_DB_ADDR", "env LEDGER_DB_ADDR"},
		{"a CronJob's image", cron.Child("image"), "", "", "image"},
		{"names are cleaned", ctr.Child("env").Index(0).Child("value"), "", "EVIL\x1b[2J\u202eNAME", "env EVILNAME"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := ingester()
			d.Suspects = []diagnose.Suspect{{Object: d.Kind + "/" + d.Name, Path: tt.path, Value: tt.value, Element: tt.element}}
			if got := ShortSuspect(&d); got != tt.want {
				t.Errorf("ShortSuspect(%s) = %q, want %q", tt.path, got, tt.want)
			}
		})
	}
}

// An env-var-unset suspect is named by the variable the program lacks, which its path (the
// env list, envFrom, an entry the revision removed) does not hold; names are cleaned.
func TestShortSuspectOfAnUnsetVariable(t *testing.T) {
	ctr := podSpec.Child("containers").Index(0)
	tests := []struct {
		name           string
		path           *field.Path
		variable, prev string
		want           string
	}{
		{"env", ctr.Child("env"), "DATABASE_URL", "", "env DATABASE_URL unset"},
		{"envFrom", ctr.Child("envFrom"), "DATABASE_URL", "", "envFrom: DATABASE_URL unset"},
		{"entry removed", ctr.Child("env").Index(2), "DATABASE_URL", `{"name":"DATABASE_URL","value":"x"}`, "env DATABASE_URL removed"},
		{"init container", podSpec.Child("initContainers").Index(0).Child("env"), "MIGRATE_DSN", "", "init env MIGRATE_DSN unset"},
		{"cleaned", ctr.Child("env"), "EVIL\x1b[2J\u202eNAME", "", "env EVILNAME unset"},
		{"no variable: by the path", ctr.Child("env"), "", "", "env"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := ingester()
			d.Suspects = []diagnose.Suspect{{Rule: diagnose.RuleEnvVarUnset, Object: d.Kind + "/" + d.Name, Path: tt.path, Variable: tt.variable, PreviousValue: tt.prev}}
			if got := ShortSuspect(&d); got != tt.want {
				t.Errorf("ShortSuspect(%s) = %q, want %q", tt.path, got, tt.want)
			}
		})
	}
}

// TestWorstFirstPutsTheBiggestOutageFirst: within a shape, the workload missing more serving
// copies comes first, whatever its namespace; the console lists rows in the same order.
func TestWorstFirstPutsTheBiggestOutageFirst(t *testing.T) {
	r := &diagnose.Report{Workloads: []diagnose.Diagnosis{
		{Kind: "Deployment", Namespace: "a", Name: "small", Shape: diagnose.ShapeLiveButIdle, Counts: diagnose.Counts{Declared: 2}},
		{Kind: "Deployment", Namespace: "z", Name: "big", Shape: diagnose.ShapeLiveButIdle, Counts: diagnose.Counts{Declared: 9}},
		{Kind: "Deployment", Namespace: "z", Name: "healthy", Shape: diagnose.ShapeHealthy, Counts: diagnose.Counts{Declared: 1, Serving: 1}},
		{Kind: "Deployment", Namespace: "m", Name: "dead", Shape: diagnose.ShapeNeverStarts, Counts: diagnose.Counts{Declared: 1}},
		{Kind: "Deployment", Namespace: "a", Name: "also-small", Shape: diagnose.ShapeLiveButIdle, Counts: diagnose.Counts{Declared: 3, Serving: 1}},
	}}
	var got []string
	for _, d := range WorstFirst(r) {
		got = append(got, d.Name)
	}
	if want := "dead big also-small small healthy"; strings.Join(got, " ") != want {
		t.Errorf("WorstFirst = %v, want %s", got, want)
	}
}
