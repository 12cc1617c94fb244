package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
	"github.com/kubediagnose/kubectl-diagnose/tui"
)

// scenarioDump is the dump of one of the shared scenarios, written by a real v1.37 API server.
func scenarioDump(id string) string {
	return filepath.Join("..", "testdata", "scenarios", id, "dump")
}

// fixtureDump is the dump of one of the fixtures, written by a real v1.37 API server.
func fixtureDump(id string) string {
	return filepath.Join("..", "testdata", "fixtures", id, "dump")
}

// parsed is what argv parsed to, captured by the run hooks.
type parsed struct {
	root    *RootOptions
	audit   *AuditOptions
	explain *ExplainOptions
}

func parseArgs(argv ...string) (parsed, error) {
	var p parsed
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	cmd := newRootCmd(streams, hooks{
		runRoot:    func(o *RootOptions) error { p.root = o; return nil },
		runAudit:   func(o *AuditOptions) error { p.audit = o; return nil },
		runExplain: func(o *ExplainOptions) error { p.explain = o; return nil },
	})
	cmd.SetArgs(argv)
	err := cmd.ExecuteContext(context.Background())
	return p, err
}

func TestAuditFlags(t *testing.T) {
	at := time.Date(2026, 11, 24, 14, 32, 10, 0, time.UTC)
	tests := []struct {
		name    string
		argv    string
		check   func(t *testing.T, o *AuditOptions)
		wantErr string
	}{
		{name: "defaults", argv: "audit", check: func(t *testing.T, o *AuditOptions) {
			if o.Output != "table" || o.FailOn != nil || o.Source.DumpPath != "" || o.Source.Namespace != "" || o.Source.AllNamespaces || o.Source.At != nil {
				t.Errorf("defaults: %+v %+v", o, o.Source)
			}
		}},
		{name: "dump, namespace and output", argv: "audit --dump ./incident -n dev-web -o json", check: func(t *testing.T, o *AuditOptions) {
			if o.Source.DumpPath != "./incident" || o.Source.Namespace != "dev-web" || o.Output != "json" {
				t.Errorf("got dump %q ns %q output %q", o.Source.DumpPath, o.Source.Namespace, o.Output)
			}
		}},
		{name: "global flags before the subcommand", argv: "--dump - -A audit -o markdown", check: func(t *testing.T, o *AuditOptions) {
			if o.Source.DumpPath != "-" || !o.Source.AllNamespaces || o.Output != "markdown" {
				t.Errorf("got dump %q all %v output %q", o.Source.DumpPath, o.Source.AllNamespaces, o.Output)
			}
		}},
		{name: "kubeconfig flags", argv: "audit --context prod --kubeconfig /tmp/kc --as auditor --request-timeout 5s", check: func(t *testing.T, o *AuditOptions) {
			f := o.Source.ConfigFlags
			if *f.Context != "prod" || *f.KubeConfig != "/tmp/kc" || *f.Impersonate != "auditor" || *f.Timeout != "5s" {
				t.Errorf("config flags: context %q kubeconfig %q as %q timeout %q", *f.Context, *f.KubeConfig, *f.Impersonate, *f.Timeout)
			}
		}},
		{name: "fail-on broken is the three failure shapes", argv: "audit --fail-on broken", check: func(t *testing.T, o *AuditOptions) {
			want := map[diagnose.Shape]bool{diagnose.ShapeNeverStarts: true, diagnose.ShapeStartsAndDies: true, diagnose.ShapeLiveButIdle: true}
			if !equalShapes(o.FailOn, want) {
				t.Errorf("FailOn = %v", o.FailOn)
			}
		}},
		{name: "fail-on list, any case, repeated flag", argv: "audit --fail-on Never-Starts,unknown --fail-on healthy", check: func(t *testing.T, o *AuditOptions) {
			want := map[diagnose.Shape]bool{diagnose.ShapeNeverStarts: true, diagnose.ShapeUnknown: true, diagnose.ShapeHealthy: true}
			if !equalShapes(o.FailOn, want) {
				t.Errorf("FailOn = %v", o.FailOn)
			}
		}},
		{name: "at", argv: "audit --at 2026-11-24T15:32:10+01:00", check: func(t *testing.T, o *AuditOptions) {
			if o.Source.At == nil || !o.Source.At.Equal(at) {
				t.Errorf("At = %v, want %v", o.Source.At, at)
			}
		}},
		{name: "bad output", argv: "audit -o xml", wantErr: `unknown output format "xml"; use one of table, wide, json, yaml, markdown, name, jsonpath=..., jsonpath-as-json=..., jsonpath-file=..., custom-columns=..., go-template=..., go-template-file=...`},
		{name: "unknown shape", argv: "audit --fail-on broke", wantErr: `unknown shape "broke" in --fail-on; use never-starts, starts-and-dies, live-but-idle, unknown, progressing, no-eligible-nodes, suspended, healthy or broken`},
		{name: "bad at", argv: "audit --at yesterday", wantErr: `invalid --at "yesterday": want an RFC3339 time such as 2026-11-24T14:32:10Z`},
		{name: "namespace and all namespaces", argv: "audit -n dev-web -A", wantErr: "--namespace and --all-namespaces cannot be used together"},
		{name: "a type", argv: "audit deploy", check: wantTargets(target{Kind: "Deployment"})},
		{name: "types, any case and alias", argv: "audit Deployments,sts,cj", check: wantTargets(target{Kind: "Deployment"}, target{Kind: "StatefulSet"}, target{Kind: "CronJob"})},
		{name: "a type and names", argv: "audit deploy api web api", check: wantTargets(target{Kind: "Deployment", Name: "api"}, target{Kind: "Deployment", Name: "web"})},
		{name: "types and a name", argv: "audit deploy,sts api", check: wantTargets(target{Kind: "Deployment", Name: "api"}, target{Kind: "StatefulSet", Name: "api"})},
		{name: "type/name pairs", argv: "audit deploy/api sts/db jobs.batch/x", check: wantTargets(target{Kind: "Deployment", Name: "api"}, target{Kind: "StatefulSet", Name: "db"}, target{Kind: "Job", Name: "x"})},
		{name: "a pod stands for its workload", argv: "audit po/api-7d9-x pod/y", check: wantTargets(target{Kind: "Pod", Name: "api-7d9-x"}, target{Kind: "Pod", Name: "y"})},
		{name: "an unknown type", argv: "audit svc/x", wantErr: `unknown workload kind "svc"; use deployment (deploy), statefulset (sts), daemonset (ds), replicaset (rs), cronjob (cj), job or pod (po)`},
		{name: "an unknown type among several", argv: "audit deploy,svc", wantErr: `unknown workload kind "svc"; use deployment (deploy), statefulset (sts), daemonset (ds), replicaset (rs), cronjob (cj), job or pod (po)`},
		{name: "type/name mixed with a name", argv: "audit deploy/x y", wantErr: "arguments in TYPE/NAME form cannot follow or precede a TYPE or NAME: deploy/x y; name each as TYPE/NAME, or give one TYPE then NAMEs"},
		{name: "pods without a name", argv: "audit pods", wantErr: "pods are not workloads; name one (pod/NAME) for the workload that controls it"},
		{name: "an empty name", argv: "audit deploy/", wantErr: `invalid workload name "" in "deploy/"`},
		{name: "sort by a keyword", argv: "audit --sort-by restarts", check: func(t *testing.T, o *AuditOptions) {
			if o.SortBy != "restarts" {
				t.Errorf("SortBy = %q", o.SortBy)
			}
		}},
		{name: "sort by a JSONPath", argv: "audit --sort-by {.counts.serving}", check: func(t *testing.T, o *AuditOptions) {
			if o.SortBy != "{.counts.serving}" {
				t.Errorf("SortBy = %q", o.SortBy)
			}
		}},
		{name: "sort by a JSONPath without braces", argv: "audit --sort-by .name", check: func(t *testing.T, o *AuditOptions) {
			if o.SortBy != ".name" {
				t.Errorf("SortBy = %q", o.SortBy)
			}
		}},
		{name: "sort by a misspelt keyword", argv: "audit --sort-by shpae", wantErr: `unknown --sort-by "shpae"; use one of shape, age, restarts, name, or a JSONPath such as '{.counts.serving}'`},
		{name: "sort by a JSONPath that does not parse", argv: "audit --sort-by {.counts", wantErr: `--sort-by: unbalanced braces in custom-columns path "{.counts"`},
		{name: "labels", argv: "audit --show-labels -L app,tier -L app.kubernetes.io/version", check: func(t *testing.T, o *AuditOptions) {
			if !o.ShowLabels || strings.Join(o.LabelColumns, " ") != "app tier app.kubernetes.io/version" {
				t.Errorf("ShowLabels %v LabelColumns %q", o.ShowLabels, o.LabelColumns)
			}
		}},
		{name: "-A keeps the namespace column, as kubectl get -A", argv: "audit -A", check: func(t *testing.T, o *AuditOptions) {
			if !o.printOptions(nil).WithNamespace {
				t.Error("-A: the table may drop its NAMESPACE column")
			}
		}},
		{name: "a go template", argv: "audit -o go-template={{.kind}}", check: func(t *testing.T, o *AuditOptions) {
			if o.Output != "go-template={{.kind}}" {
				t.Errorf("Output = %q", o.Output)
			}
		}},
		{name: "a go template that does not parse", argv: "audit -o go-template={{.kind", wantErr: "-o go-template={{.kind: error parsing template {{.kind, template: output:1: unclosed action"},
		{name: "demo", argv: "audit --demo -n telemetry", check: func(t *testing.T, o *AuditOptions) {
			if !o.Source.Demo || o.Source.Namespace != "telemetry" {
				t.Errorf("Demo %v namespace %q", o.Source.Demo, o.Source.Namespace)
			}
		}},
		{name: "demo and dump", argv: "audit --demo --dump d", wantErr: "--demo and --dump cannot be used together"},
		{name: "demo and prometheus", argv: "audit --demo --prometheus http://127.0.0.1:9", wantErr: "--demo is a built-in dump; --prometheus cannot be used with it"},
		{name: "unknown flag", argv: "audit --bogus", wantErr: "unknown flag: --bogus; see 'kubectl diagnose audit --help'"},
		{name: "missing flag value", argv: "audit -o", wantErr: "flag needs an argument: 'o' in -o; see 'kubectl diagnose audit --help'"},
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
			if p.audit == nil {
				t.Fatal("audit did not run")
			}
			tt.check(t, p.audit)
		})
	}
}

// wantTargets checks the targets audit's arguments parsed to.
func wantTargets(want ...target) func(t *testing.T, o *AuditOptions) {
	return func(t *testing.T, o *AuditOptions) {
		t.Helper()
		if fmt.Sprint(o.Targets) != fmt.Sprint(want) {
			t.Errorf("targets %v, want %v", o.Targets, want)
		}
	}
}

func TestExplainFlags(t *testing.T) {
	tests := []struct {
		argv       string
		kind, name string
		output     string
		wantErr    string
	}{
		{argv: "explain deploy/telemetry-ingester", kind: "Deployment", name: "telemetry-ingester", output: "text"},
		{argv: "explain Deployments/x -o json", kind: "Deployment", name: "x", output: "json"},
		{argv: "explain STS/search-indexer", kind: "StatefulSet", name: "search-indexer", output: "text"},
		{argv: "explain ds log-shipper -o yaml", kind: "DaemonSet", name: "log-shipper", output: "yaml"},
		{argv: "explain rs/web-frontend-59797f96c5", kind: "ReplicaSet", name: "web-frontend-59797f96c5", output: "text"},
		{argv: "explain deployment.apps/x", kind: "Deployment", name: "x", output: "text"},
		{argv: "explain", wantErr: "explain takes one workload as KIND/NAME, e.g. deploy/telemetry-ingester"},
		{argv: "explain telemetry-ingester", wantErr: "want KIND/NAME, e.g. deploy/telemetry-ingester"},
		{argv: "explain cronjob/nightly-billing", kind: "CronJob", name: "nightly-billing", output: "text"},
		{argv: "explain jobs.batch/report-export", kind: "Job", name: "report-export", output: "text"},
		{argv: "explain pod/web-frontend-59797f96c5-j2fl8", kind: "Pod", name: "web-frontend-59797f96c5-j2fl8", output: "text"},
		{argv: "explain po web-frontend-59797f96c5-j2fl8 -o markdown", kind: "Pod", name: "web-frontend-59797f96c5-j2fl8", output: "markdown"},
		{argv: "explain svc/x", wantErr: `unknown workload kind "svc"; use deployment (deploy), statefulset (sts), daemonset (ds), replicaset (rs), cronjob (cj), job or pod (po)`},
		{argv: "explain deploy/", wantErr: `invalid workload name ""`},
		{argv: "explain deploy/x -o wide", wantErr: `unknown output format "wide"; use one of text, json, yaml, markdown`},
		{argv: "explain deploy/x --demo --dump d", wantErr: "--demo and --dump cannot be used together"},
	}
	for _, tt := range tests {
		t.Run(tt.argv, func(t *testing.T) {
			p, err := parseArgs(strings.Fields(tt.argv)...)
			if tt.wantErr != "" {
				checkUsageError(t, err, tt.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o := p.explain; o.Kind != tt.kind || o.Name != tt.name || o.Output != tt.output {
				t.Errorf("got %s/%s -o %s, want %s/%s -o %s", o.Kind, o.Name, o.Output, tt.kind, tt.name, tt.output)
			}
		})
	}
}

func TestRootFlags(t *testing.T) {
	p, err := parseArgs("--dump", "d", "-n", "dev-web")
	if err != nil {
		t.Fatal(err)
	}
	if p.root == nil || p.root.Source.DumpPath != "d" || p.root.Source.Namespace != "dev-web" || p.root.Source.Demo {
		t.Fatalf("root options: %+v", p.root)
	}
	if p, err = parseArgs("--demo"); err != nil || !p.root.Source.Demo {
		t.Fatalf("--demo: %v %+v", err, p.root)
	}
	if p, err = parseArgs("--demo", "audit"); err != nil || p.audit == nil || !p.audit.Source.Demo {
		t.Fatalf("--demo audit: %v %+v", err, p.audit)
	}
	tests := []struct{ argv, want string }{
		{"--demo --dump d", "--demo and --dump cannot be used together"},
		{"deploy/x", `unknown command "deploy/x" for "kubectl diagnose" (did you mean kubectl diagnose explain deploy/x or kubectl diagnose audit deploy/x?); see 'kubectl diagnose --help'`},
		{"svc/x", `unknown command "svc/x" for "kubectl diagnose"; see 'kubectl diagnose --help'`},
		{"audti", `unknown command "audti" for "kubectl diagnose" (did you mean audit?); see 'kubectl diagnose --help'`},
		{"explian -n x", `unknown command "explian" for "kubectl diagnose" (did you mean explain?); see 'kubectl diagnose --help'`},
		// The flag is audit's: the command, not the flag, is what is wrong.
		{"adit --fail-on broken", `unknown command "adit" for "kubectl diagnose" (did you mean audit?); see 'kubectl diagnose --help'`},
		{"--bogus", "unknown flag: --bogus; see 'kubectl diagnose --help'"},
		{"rollout deploy/x --demo", "unknown flag: --demo; see 'kubectl diagnose rollout --help'"},
	}
	for _, tt := range tests {
		_, err := parseArgs(strings.Fields(tt.argv)...)
		checkUsageError(t, err, tt.want)
	}
}

func TestCommandName(t *testing.T) {
	tests := []struct{ argv0, want string }{
		// kubectl runs a plugin by its path.
		{"/usr/local/bin/kubectl-diagnose", "kubectl diagnose"},
		{"kubectl-diagnose", "kubectl diagnose"},
		{`C:\tools\kubectl-diagnose.exe`, "kubectl diagnose"},
		{"/tmp/go-build1/b001/exe/kubectl-diagnose", "kubectl diagnose"},
		// kubectl's own mapping of a plugin file name to its words.
		{"/home/u/.krew/bin/kubectl-view_secret", "kubectl view-secret"},
		{"kubectl-cert-manager", "kubectl cert manager"},
		// A renamed copy keeps its name.
		{"/usr/local/bin/kd", "kd"},
		{"kubectl-", "kubectl-"},
	}
	for _, tt := range tests {
		argv0 := tt.argv0
		if runtime.GOOS != "windows" {
			// filepath.Base splits on / only off Windows.
			argv0 = strings.ReplaceAll(argv0, `\`, "/")
		}
		if got := CommandName(argv0); got != tt.want {
			t.Errorf("CommandName(%q) = %q, want %q", argv0, got, tt.want)
		}
	}

	// Usage and hints use it.
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	cmd := newRootCmd(streams, hooks{argv0: "/opt/bin/kd"})
	cmd.SetArgs([]string{"explain", "deploy/nope", "--dump", scenarioDump("dev-web")})
	err := cmd.ExecuteContext(context.Background())
	if want := "list the workloads with: kd audit --dump " + scenarioDump("dev-web"); err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("hint of a renamed copy: %v, want it to end with %q", err, want)
	}
}

func checkUsageError(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %q", want)
	}
	if err.Error() != want {
		t.Errorf("error = %q\nwant    %q", err, want)
	}
	if ExitCode(err) != ExitUsage {
		t.Errorf("exit code %d, want %d", ExitCode(err), ExitUsage)
	}
}

func equalShapes(a, b map[diagnose.Shape]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range b {
		if !a[k] {
			return false
		}
	}
	return true
}

// run executes argv with test streams and stdin, returning stdout, stderr and the error.
func run(t *testing.T, stdin []byte, h hooks, argv ...string) (string, string, error) {
	t.Helper()
	streams, in, out, errOut := genericiooptions.NewTestIOStreams()
	in.Write(stdin)
	cmd := newRootCmd(streams, h)
	cmd.SetArgs(argv)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// allShapes matches every workload whatever the engine decides, so exit 3 is tested on its own.
const allShapes = "never-starts,starts-and-dies,live-but-idle,unknown,progressing,healthy"

func TestRun(t *testing.T) {
	deployments, err := os.ReadFile(filepath.Join(scenarioDump("dev-web"), "dev-web", "deployments.json"))
	if err != nil {
		t.Fatal(err)
	}
	events, err := os.ReadFile(filepath.Join(scenarioDump("dev-web"), "dev-web", "events.json"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		argv       []string
		stdin      []byte
		wantOut    []string // substrings of stdout, in order
		wantErr    string
		wantCode   int
		wantErrOut string
		// quiet: nothing on stderr.
		quiet bool
	}{
		{
			name:    "audit table names the suspect env var from the template",
			argv:    []string{"audit", "--dump", scenarioDump("dev-ingester")},
			wantOut: []string{"SHAPE", "WORKLOAD", "COPIES", "SERVING", "YOUNGEST", "RESTARTS", "SUSPECT", "CAUSE\n", "live-but-idle", "deployment/telemetry-ingester", "5/5", "0", "env INGEST_ENDPOINT", "spec\n"},
		},
		{
			name:    "audit of one namespace of a dump",
			argv:    []string{"audit", "--dump", scenarioDump("dev-web"), "-n", "dev-web", "-o", "wide"},
			wantOut: []string{"PATH", "FIX", "deployment/web-frontend", "spec.template.spec.containers[0].readinessProbe.httpGet.path"},
		},
		{
			name:     "a namespace the dump does not hold",
			argv:     []string{"audit", "--dump", scenarioDump("dev-web"), "-n", "dev-wbe"},
			wantErr:  `namespace "dev-wbe" is not in dump ` + scenarioDump("dev-web") + "; it holds dev-web",
			wantCode: ExitError,
		},
		{
			name:  "audit reads kubectl output on stdin",
			argv:  []string{"audit", "--dump", "-"},
			stdin: deployments,
			// Deployments alone: the copies are counted by the controller's status, not read
			// as missing (it used to say unknown, 0/3), and stderr says the pods were not seen.
			wantOut:    []string{"never-starts", "deployment/web-frontend", "3/3"},
			wantErrOut: "warning: could not read Pod: not in the dump\n",
		},
		{
			name:     "fail-on matched prints the report, then exits 3",
			argv:     []string{"audit", "--dump", scenarioDump("dev-web"), "--fail-on", allShapes},
			wantOut:  []string{"deployment/web-frontend"},
			wantErr:  "1 workload matches --fail-on: ",
			wantCode: ExitFailedOn,
		},
		{
			name:     "unreadable dump",
			argv:     []string{"audit", "--dump", "testdata/does-not-exist"},
			wantErr:  "testdata/does-not-exist",
			wantCode: ExitError,
		},
		{
			name:       "no workloads is a notice on stderr",
			argv:       []string{"audit", "--dump", "-"},
			stdin:      events,
			wantErrOut: "No workloads found.\n",
		},
		{
			name:    "explain prints one workload in full",
			argv:    []string{"explain", "deploy/telemetry-ingester", "--dump", scenarioDump("dev-ingester")},
			wantOut: []string{"deployment/telemetry-ingester in namespace dev-ingester\n", "Shape:     live-but-idle", "Suspects, most likely first:", "spec.template.spec.containers[0].env[0].value", "telemetry-intake.internal:9443", "Evidence:"},
		},
		{
			name:     "explain of a workload that is not there",
			argv:     []string{"explain", "deploy/telemetry", "--dump", scenarioDump("dev-ingester"), "-n", "dev-ingester"},
			wantErr:  "deployment/telemetry not found in namespace dev-ingester; list the workloads with: kubectl diagnose audit --dump " + scenarioDump("dev-ingester") + " -n dev-ingester",
			wantCode: ExitError,
		},
		{
			name:     "explain suggests the kind that exists",
			argv:     []string{"explain", "sts/web-frontend", "--dump", scenarioDump("dev-web")},
			wantErr:  "statefulset/web-frontend not found in any namespace (did you mean deployment/web-frontend?); list the workloads with: kubectl diagnose audit --dump " + scenarioDump("dev-web"),
			wantCode: ExitError,
		},
		{
			name:    "root without a terminal prints the audit table",
			argv:    []string{"--dump", scenarioDump("dev-web")},
			wantOut: []string{"SHAPE", "deployment/web-frontend"},
		},
		{
			name:     "a kubeconfig that is not there",
			argv:     []string{"audit", "--kubeconfig", "testdata/no-such-kubeconfig"},
			wantErr:  "load kubeconfig: stat testdata/no-such-kubeconfig: no such file or directory",
			wantCode: ExitError,
		},
		{
			name:     "an API server that does not answer",
			argv:     []string{"audit", "--server", "https://127.0.0.1:1", "--request-timeout", "2s"},
			wantErr:  "cannot reach the API server at 127.0.0.1:1",
			wantCode: ExitError,
		},
		{
			name:    "version",
			argv:    []string{"version"},
			wantOut: []string{"kubectl-diagnose "},
		},
		{
			name:       "explain a pod: its Deployment, through its ReplicaSet",
			argv:       []string{"explain", "pod/web-frontend-59797f96c5-j2fl8", "--dump", scenarioDump("dev-web")},
			wantOut:    []string{"deployment/web-frontend in namespace dev-web\n", "Shape:     live-but-idle"},
			wantErrOut: "pod/web-frontend-59797f96c5-j2fl8 is controlled by deployment/web-frontend (through replicaset/web-frontend-59797f96c5); explaining deployment/web-frontend\n",
		},
		{
			name:       "explain a ReplicaSet a Deployment owns: the Deployment",
			argv:       []string{"explain", "rs/payments-api-6685d59959", "--dump", scenarioDump("dev-payments"), "-o", "json"},
			wantOut:    []string{`"kind": "Deployment"`, `"name": "payments-api"`},
			wantErrOut: "replicaset/payments-api-6685d59959 is controlled by deployment/payments-api; explaining deployment/payments-api\n",
		},
		{
			name:       "explain a StatefulSet's pod",
			argv:       []string{"explain", "po", "search-indexer-0", "--dump", scenarioDump("dev-search")},
			wantOut:    []string{"statefulset/search-indexer in namespace dev-search\n"},
			wantErrOut: "pod/search-indexer-0 is controlled by statefulset/search-indexer; explaining statefulset/search-indexer\n",
		},
		{
			name:       "explain a Job's pod: the CronJob that made the Job",
			argv:       []string{"explain", "pod/nightly-billing-3-c9b6b", "--dump", fixtureDump("cronjob-template-change")},
			wantOut:    []string{"cronjob/nightly-billing in namespace fixture-cronjob-template-change\n"},
			wantErrOut: "pod/nightly-billing-3-c9b6b is controlled by cronjob/nightly-billing (through job/nightly-billing-3); explaining cronjob/nightly-billing\n",
		},
		{
			name:       "explain a Job a CronJob owns",
			argv:       []string{"explain", "job/nightly-billing-3", "--dump", fixtureDump("cronjob-template-change")},
			wantOut:    []string{"cronjob/nightly-billing in namespace fixture-cronjob-template-change\n"},
			wantErrOut: "job/nightly-billing-3 is controlled by cronjob/nightly-billing; explaining cronjob/nightly-billing\n",
		},
		{
			name:     "explain a pod that is not there",
			argv:     []string{"explain", "pod/web-frontend-x", "--dump", scenarioDump("dev-web"), "-n", "dev-web"},
			wantErr:  "pod/web-frontend-x not found in namespace dev-web; list the workloads with: kubectl diagnose audit --dump " + scenarioDump("dev-web") + " -n dev-web",
			wantCode: ExitError,
		},
		{
			name:     "explain a pod no workload controls",
			argv:     []string{"explain", "pod/debug", "--dump", "-"},
			stdin:    []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"debug","namespace":"ops"},"spec":{"containers":[{"name":"sh","image":"busybox"}]}}`),
			wantErr:  "pod/debug is controlled by no workload (it has no controller reference); only workloads are diagnosed",
			wantCode: ExitError,
		},
		{
			name: "explain a pod a custom controller owns",
			argv: []string{"explain", "pod/trainer-0", "--dump", "-"},
			stdin: []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"trainer-0","namespace":"ml","ownerReferences":[` +
				`{"apiVersion":"kubeflow.org/v1","kind":"TFJob","name":"trainer","uid":"u1","controller":true}]},"spec":{"containers":[{"name":"t","image":"tf"}]}}`),
			wantErr:  "pod/trainer-0 is controlled by tfjob/trainer, which is not a workload kind this tool diagnoses",
			wantCode: ExitError,
		},
		{
			name:    "explain -o markdown, for the ticket",
			argv:    []string{"explain", "deploy/telemetry-ingester", "--dump", scenarioDump("dev-ingester"), "-o", "markdown"},
			wantOut: []string{"# deployment/telemetry-ingester in dev-ingester: live-but-idle\n", "## Suspects\n", "`spec.template.spec.containers[0].env[0].value`", "## Suggested fix\n", "`kubectl rollout undo deployment/telemetry-ingester --to-revision=1 -n dev-ingester`", "## Changed since it last served\n", "## Timeline\n", "## Copies\n", "| telemetry-ingester-"},
		},
		{
			name:    "explain on the demo",
			argv:    []string{"explain", "deploy/telemetry-ingester", "--demo"},
			wantOut: []string{"deployment/telemetry-ingester in namespace telemetry\n", "env[0].value"},
		},
		{
			name:     "explain on the demo, a workload it does not hold",
			argv:     []string{"explain", "deploy/nope", "--demo"},
			wantErr:  "deployment/nope not found in any namespace; list the workloads with: kubectl diagnose audit --demo",
			wantCode: ExitError,
		},
		{
			name:    "audit on the demo",
			argv:    []string{"audit", "--demo", "--no-headers", "-o", "name"},
			wantOut: []string{"deployment.apps/telemetry-"},
		},
		{
			name:    "audit a type",
			argv:    []string{"audit", "sts", "--demo", "-o", "name"},
			wantOut: []string{"statefulset.apps/telemetry-store\n"},
		},
		{
			name:       "audit a pod: the row of its workload",
			argv:       []string{"audit", "pod/web-frontend-59797f96c5-j2fl8", "--dump", scenarioDump("dev-web"), "-o", "name"},
			wantOut:    []string{"deployment.apps/web-frontend\n"},
			wantErrOut: "pod/web-frontend-59797f96c5-j2fl8 is controlled by deployment/web-frontend (through replicaset/web-frontend-59797f96c5)\n",
		},
		{
			name:     "audit names: the rows found, then the names that are not",
			argv:     []string{"audit", "deploy", "web-frontend", "nope", "--dump", scenarioDump("dev-web"), "-n", "dev-web", "-o", "name"},
			wantOut:  []string{"deployment.apps/web-frontend\n"},
			wantErr:  "deployment/nope not found in namespace dev-web",
			wantCode: ExitError,
		},
		{
			name:     "audit a name that is nowhere: no table, no notice, the error",
			argv:     []string{"audit", "deploy/nope", "--dump", scenarioDump("dev-web")},
			wantErr:  "deployment/nope not found in any namespace",
			wantCode: ExitError,
			quiet:    true,
		},
		{
			name:    "-A keeps the NAMESPACE column on one namespace",
			argv:    []string{"audit", "--dump", scenarioDump("dev-web"), "-A"},
			wantOut: []string{"SHAPE", "NAMESPACE", "WORKLOAD", "live-but-idle", "dev-web", "deployment/web-frontend"},
		},
		{
			name:    "sort by a JSONPath, ascending as kubectl's",
			argv:    []string{"audit", "--demo", "--sort-by", "{.counts.restarts}", "-o", "name"},
			wantOut: []string{"deployment.apps/telemetry-ingester\n", "deployment.apps/telemetry-api\n", "deployment.apps/telemetry-worker\n"},
		},
		{
			name:     "sort by a path no workload has",
			argv:     []string{"audit", "--demo", "--sort-by", ".nope"},
			wantErr:  `--sort-by: couldn't find any field with path ".nope" in the workloads`,
			wantCode: ExitError,
		},
		{
			name:    "labels as kubectl get shows them",
			argv:    []string{"audit", "--dump", scenarioDump("dev-mixed"), "-L", "app.kubernetes.io/part-of", "--show-labels", "--sort-by", "name"},
			wantOut: []string{"CAUSE   PART-OF   LABELS\n", "deployment/batch-exporter", " data      app.kubernetes.io/name=batch-exporter,app.kubernetes.io/part-of=data,app=batch-exporter\n", "deployment/checkout", " shop      app.kubernetes.io/name=checkout,app.kubernetes.io/part-of=shop,app=checkout\n"},
		},
		{
			name:    "a go template over -o json's document",
			argv:    []string{"audit", "--demo", "-o", `go-template={{range .workloads}}{{.name}}:{{.shape}}{{"\n"}}{{end}}`},
			wantOut: []string{"telemetry-ingester:live-but-idle\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := run(t, tt.stdin, hooks{interactive: func() bool { return false }}, tt.argv...)
			if got := ExitCode(err); got != tt.wantCode {
				t.Fatalf("exit code %d (err %v), want %d", got, err, tt.wantCode)
			}
			if err != nil && !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not contain %q", err, tt.wantErr)
			}
			rest := out
			for _, w := range tt.wantOut {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("stdout lacks %q (in order):\n%s", w, out)
				}
				rest = rest[i+len(w):]
			}
			if (tt.wantErrOut != "" || tt.quiet) && errOut != tt.wantErrOut {
				t.Errorf("stderr = %q, want %q", errOut, tt.wantErrOut)
			}
		})
	}
}

// TestAuditJSONMatchesScenario runs the command end to end on the canonical scenario and holds
// its JSON to the scenario's expected verdict.
func TestAuditJSONMatchesScenario(t *testing.T) {
	out, _, err := run(t, nil, hooks{}, "audit", "--dump", scenarioDump("dev-ingester"), "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		APIVersion    string `json:"apiVersion"`
		ReferenceTime string `json:"referenceTime"`
		Workloads     []struct {
			Name     string `json:"name"`
			Shape    string `json:"shape"`
			Cause    string `json:"cause"`
			Suspects []struct {
				Object string `json:"object"`
				Path   string `json:"path"`
			} `json:"suspects"`
		} `json:"workloads"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if _, err := time.Parse(time.RFC3339, doc.ReferenceTime); doc.APIVersion != diagnose.APIVersion || err != nil {
		t.Errorf("apiVersion %q referenceTime %q", doc.APIVersion, doc.ReferenceTime)
	}
	if len(doc.Workloads) != 1 {
		t.Fatalf("%d workloads, want 1", len(doc.Workloads))
	}
	w := doc.Workloads[0]
	if w.Name != "telemetry-ingester" || w.Shape != "live-but-idle" || w.Cause != "spec" || len(w.Suspects) == 0 ||
		w.Suspects[0].Object != "Deployment/telemetry-ingester" || w.Suspects[0].Path != "spec.template.spec.containers[0].env[0].value" {
		t.Errorf("verdict %+v, want live-but-idle, cause spec, suspect Deployment/telemetry-ingester spec.template.spec.containers[0].env[0].value", w)
	}
}

func TestAtOverridesReferenceTime(t *testing.T) {
	out, _, err := run(t, nil, hooks{}, "audit", "--dump", scenarioDump("dev-ingester"), "-o", "yaml", "--at", "2026-11-25T14:32:10Z")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "referenceTime: \"2026-11-25T14:32:10Z\"") {
		t.Errorf("reference time not overridden:\n%s", out)
	}
}

func TestRootConsoleTakesSelectors(t *testing.T) {
	var got *tui.Options
	h := hooks{
		interactive: func() bool { return true },
		console: func(_ context.Context, o tui.Options) error {
			got = &o
			return nil
		},
	}
	if _, _, err := run(t, nil, h, "--dump", scenarioDump("dev-mixed"), "-l", "app.kubernetes.io/part-of=shop", "--field-selector", "metadata.name!=checkout"); err != nil {
		t.Fatal(err)
	}
	if got == nil {
		t.Fatal("console not opened")
	}
	if got.Selector != "-l app.kubernetes.io/part-of=shop --field-selector metadata.name!=checkout" {
		t.Errorf("header selector %q", got.Selector)
	}
	snap, err := got.Source.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range snap.Deployments {
		names = append(names, d.Name)
	}
	if strings.Join(names, ",") != "recommender" || len(snap.ReplicaSets) == 0 {
		t.Errorf("the console's source reads deployments %v and %d ReplicaSets; want recommender with its ReplicaSets", names, len(snap.ReplicaSets))
	}
	if _, _, err := run(t, nil, h, "-l", "tier in (web"); ExitCode(err) != ExitUsage {
		t.Errorf("a bad selector: %v (exit %d), want a usage error", err, ExitCode(err))
	}
}

func TestRootOpensConsoleOnTerminal(t *testing.T) {
	var got *tui.Options
	h := hooks{
		interactive: func() bool { return true },
		console: func(_ context.Context, o tui.Options) error {
			got = &o
			return nil
		},
	}
	if _, _, err := run(t, nil, h, "--dump", scenarioDump("dev-web"), "-n", "dev-web", "--at", "2026-11-24T14:32:10Z"); err != nil {
		t.Fatal(err)
	}
	if got == nil {
		t.Fatal("console not opened")
	}
	if got.Source == nil || got.SourceLabel != "dump" || got.AllNamespaces || strings.Join(got.Namespaces, ",") != "dev-web" ||
		got.At == nil || got.At.Format(time.RFC3339) != "2026-11-24T14:32:10Z" || got.In == nil || got.Out == nil {
		t.Errorf("console options: %+v", got)
	}
	snap, err := got.Source.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Deployments) != 1 || snap.Deployments[0].Name != "web-frontend" {
		t.Errorf("console source reads %d deployments", len(snap.Deployments))
	}

	got = nil
	if _, _, err := run(t, nil, h, "--dump", scenarioDump("dev-web")); err != nil {
		t.Fatal(err)
	}
	if !got.AllNamespaces || got.Namespaces != nil {
		t.Errorf("a dump without -n is read whole: AllNamespaces %v Namespaces %v", got.AllNamespaces, got.Namespaces)
	}

	consoleErr := errors.New("console: boom")
	h.console = func(context.Context, tui.Options) error { return consoleErr }
	if _, _, err := run(t, nil, h, "--dump", scenarioDump("dev-web")); !errors.Is(err, consoleErr) || ExitCode(err) != ExitError {
		t.Errorf("console error: %v (exit %d)", err, ExitCode(err))
	}
}

func TestDemo(t *testing.T) {
	var got *tui.Options
	h := hooks{
		interactive: func() bool { return true },
		console: func(_ context.Context, o tui.Options) error {
			got = &o
			return nil
		},
	}
	if _, _, err := run(t, nil, h, "--demo"); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.SourceLabel != "demo" || got.Source == nil || got.Watch != nil {
		t.Fatalf("demo console options: %+v", got)
	}
	snap, err := got.Source.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !snap.HasNamespace("telemetry") || len(snap.Deployments) == 0 {
		t.Errorf("demo source: namespaces %v, %d deployments", snap.Namespaces, len(snap.Deployments))
	}

	// Without a terminal the demo prints its audit table, so it can be tried in a pipe.
	out, _, err := run(t, nil, hooks{interactive: func() bool { return false }}, "--demo")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "deployment/telemetry-ingester") || !strings.Contains(out, "env INGEST_ENDPOINT") {
		t.Errorf("demo audit table:\n%s", out)
	}
}

func TestExitCode(t *testing.T) {
	tests := []struct {
		argv []string
		want int
	}{
		{[]string{"audit", "--dump", scenarioDump("dev-web")}, ExitOK},
		{[]string{"audit", "--dump", scenarioDump("dev-web"), "--fail-on", "unknown"}, -1}, // engine-dependent: 0 or 3
		{[]string{"audit", "--dump", scenarioDump("dev-web"), "--fail-on", allShapes}, ExitFailedOn},
		{[]string{"audit", "--dump", "/nonexistent/dump"}, ExitError},
		{[]string{"audit", "-o", "xml"}, ExitUsage},
		{[]string{"audit", "--fail-on", "sad"}, ExitUsage},
		{[]string{"explain"}, ExitUsage},
		{[]string{"dump"}, ExitUsage},
		{[]string{"nonsense"}, ExitUsage},
	}
	for _, tt := range tests {
		_, _, err := run(t, nil, hooks{interactive: func() bool { return false }}, tt.argv...)
		got := ExitCode(err)
		if tt.want == -1 {
			if got != ExitOK && got != ExitFailedOn {
				t.Errorf("%v: exit %d (%v)", tt.argv, got, err)
			}
			continue
		}
		if got != tt.want {
			t.Errorf("%v: exit %d (%v), want %d", tt.argv, got, err, tt.want)
		}
	}
	if ExitCode(nil) != ExitOK {
		t.Error("nil error is not exit 0")
	}
	if ExitCode(errors.New("x")) != ExitError {
		t.Error("plain error is not exit 1")
	}
	wrapped := errors.Join(errors.New("ctx"), &FailOnError{Matched: map[diagnose.Shape]int{diagnose.ShapeNeverStarts: 2}})
	if ExitCode(wrapped) != ExitFailedOn {
		t.Error("wrapped FailOnError is not exit 3")
	}
}

func TestFailOnErrorMessage(t *testing.T) {
	err := &FailOnError{Matched: map[diagnose.Shape]int{diagnose.ShapeNeverStarts: 2, diagnose.ShapeLiveButIdle: 1}}
	if want := "3 workloads match --fail-on: live-but-idle 1, never-starts 2"; err.Error() != want {
		t.Errorf("got %q, want %q", err, want)
	}
}

func TestVisibilityWarnings(t *testing.T) {
	var out, errOut bytes.Buffer
	o := &AuditOptions{IOStreams: genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, Source: NewSourceOptions(nil), Output: "json"}
	r := &diagnose.Report{
		Visibility: []snapshot.Visibility{{Kind: "Event", Namespace: "dev-web", Reason: "events is forbidden: User \"auditor\" cannot list resource \"events\"\x1b[2J"}},
		Workloads:  []diagnose.Diagnosis{{Kind: "Deployment", Namespace: "dev-web", Name: "web-frontend", Shape: diagnose.ShapeUnknown}},
	}
	if err := o.print(&snapshot.Snapshot{}, r, "dev-web"); err != nil {
		t.Fatal(err)
	}
	want := "warning: could not read Event in namespace dev-web: events is forbidden: User \"auditor\" cannot list resource \"events\"\n"
	if errOut.String() != want {
		t.Errorf("stderr = %q, want %q", errOut.String(), want)
	}
	if !json.Valid(out.Bytes()) {
		t.Errorf("stdout is not the JSON document alone:\n%s", out.String())
	}
}

// twoNamespaces copies the twin ingester scenarios into one dump directory: the same Deployment
// name in two namespaces.
func twoNamespaces(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for i, id := range []string{"dev-ingester", "dev-ingester-upstream"} {
		if err := os.CopyFS(filepath.Join(dir, fmt.Sprint(i)), os.DirFS(scenarioDump(id))); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestSeveralNamespaces(t *testing.T) {
	dir := twoNamespaces(t)
	h := hooks{interactive: func() bool { return false }}

	out, _, err := run(t, nil, h, "audit", "--dump", dir)
	if err != nil {
		t.Fatal(err)
	}
	header, rows, _ := strings.Cut(out, "\n")
	if !strings.Contains(header, "NAMESPACE") || !strings.Contains(rows, "dev-ingester-upstream") || !strings.Contains(rows, " dev-ingester ") {
		t.Errorf("a dump of two namespaces is audited whole, with a NAMESPACE column:\n%s", out)
	}

	_, _, err = run(t, nil, h, "explain", "deploy/telemetry-ingester", "--dump", dir)
	checkUsageError(t, err, "deployment/telemetry-ingester exists in namespaces dev-ingester, dev-ingester-upstream; pick one with -n")

	out, _, err = run(t, nil, h, "explain", "deploy/telemetry-ingester", "--dump", dir, "-n", "dev-ingester-upstream", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct{ Namespace, Name string }
	if err := json.Unmarshal([]byte(out), &d); err != nil || d.Namespace != "dev-ingester-upstream" || d.Name != "telemetry-ingester" {
		t.Errorf("explain -o json: %v %+v\n%s", err, d, out)
	}

	out, _, err = run(t, nil, h, "audit", "--dump", dir, "-n", "dev-ingester")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "dev-ingester-upstream") || strings.Contains(out, "NAMESPACE") {
		t.Errorf("-n keeps one namespace of the dump:\n%s", out)
	}
}

// kubeconfig writes a kubeconfig whose context "prod" has namespace "payments" and a server
// that nothing listens on: building a live source must not contact it.
func kubeconfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	const cfg = `apiVersion: v1
kind: Config
clusters:
- name: prod
  cluster:
    server: https://127.0.0.1:1
contexts:
- name: prod
  context:
    cluster: prod
    user: auditor
    namespace: payments
current-context: prod
users:
- name: auditor
  user:
    token: not-a-secret
`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRootOpensConsoleOnLiveCluster(t *testing.T) {
	var got *tui.Options
	h := hooks{
		interactive: func() bool { return true },
		console: func(_ context.Context, o tui.Options) error {
			got = &o
			return nil
		},
	}
	if _, _, err := run(t, nil, h, "--kubeconfig", kubeconfig(t)); err != nil {
		t.Fatal(err)
	}
	if got.SourceLabel != "live" || got.Context != "prod" || strings.Join(got.Namespaces, ",") != "payments" || got.AllNamespaces {
		t.Errorf("live console options: label %q context %q namespaces %v all %v", got.SourceLabel, got.Context, got.Namespaces, got.AllNamespaces)
	}
	if got.Source == nil || got.Watch == nil || got.SwitchNamespace == nil || got.SwitchNamespace("other") == nil ||
		got.ListNamespaces == nil {
		t.Errorf("live console lacks source, watch, namespace switch or namespace list: %+v", got)
	}

	got = nil
	if _, _, err := run(t, nil, h, "--kubeconfig", kubeconfig(t), "-A"); err != nil {
		t.Fatal(err)
	}
	if !got.AllNamespaces || len(got.Namespaces) != 0 {
		t.Errorf("-A: namespaces %v all %v", got.Namespaces, got.AllNamespaces)
	}
}
