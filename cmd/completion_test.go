package cmd

import (
	"encoding/json"
	goflag "flag"
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
)

// complete runs cobra's __complete, what kubectl_complete-diagnose runs, and returns the
// suggestions and the directive line.
func complete(t *testing.T, argv ...string) ([]string, string) {
	t.Helper()
	out, _, err := run(t, nil, hooks{}, append([]string{cobra.ShellCompRequestCmd}, argv...)...)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := lines[len(lines)-1]
	var words []string
	for _, l := range lines[:len(lines)-1] {
		word, _, _ := strings.Cut(l, "\t") // drop a description
		words = append(words, word)
	}
	return words, last
}

func TestCompletion(t *testing.T) {
	mixed := scenarioDump("dev-mixed")
	tests := []struct {
		name      string
		argv      []string
		want      []string
		directive string
	}{
		{name: "namespaces of a dump", argv: []string{"audit", "--dump", twoNamespaces(t), "-n", ""}, want: []string{"dev-ingester", "dev-ingester-upstream"}, directive: ":4"},
		{name: "namespaces on the root command", argv: []string{"--dump", mixed, "--namespace", ""}, want: []string{"dev-mixed"}, directive: ":4"},
		{name: "contexts of the kubeconfig", argv: []string{"audit", "--kubeconfig", kubeconfig(t), "--context", ""}, want: []string{"prod"}, directive: ":4"},
		{name: "a list of contexts leaves out those typed", argv: []string{"audit", "--kubeconfig", fleetKubeconfig(t), "--context", "b,"}, want: []string{"b,a", "b,dead"}, directive: ":6"},
		{name: "audit formats", argv: []string{"audit", "-o", ""}, want: []string{"table", "wide", "json", "yaml", "markdown", "name", "jsonpath=", "jsonpath-as-json=", "jsonpath-file=", "custom-columns=", "go-template=", "go-template-file="}, directive: ":6"},
		{name: "explain formats", argv: []string{"explain", "-o", ""}, want: []string{"text", "json", "yaml", "markdown"}, directive: ":4"},
		{name: "version formats", argv: []string{"version", "-o", ""}, want: []string{"json", "yaml"}, directive: ":4"},
		{name: "fail-on", argv: []string{"audit", "--fail-on", ""}, want: []string{"broken", "never-starts", "starts-and-dies", "live-but-idle", "unknown", "progressing", "no-eligible-nodes", "suspended", "healthy"}, directive: ":6"},
		{name: "fail-on after a comma leaves out what is typed", argv: []string{"audit", "--fail-on", "broken,healthy,"}, want: []string{"broken,healthy,never-starts", "broken,healthy,starts-and-dies", "broken,healthy,live-but-idle", "broken,healthy,unknown", "broken,healthy,progressing", "broken,healthy,no-eligible-nodes", "broken,healthy,suspended"}, directive: ":6"},
		{name: "sort-by", argv: []string{"audit", "--sort-by", ""}, want: []string{"shape", "age", "restarts", "name"}, directive: ":4"},
		{name: "explain kinds", argv: []string{"explain", ""}, want: []string{"deployment/", "statefulset/", "daemonset/", "replicaset/", "cronjob/", "job/", "pod/"}, directive: ":6"},
		{name: "rollout kinds", argv: []string{"rollout", ""}, want: []string{"deployment/", "statefulset/", "daemonset/"}, directive: ":6"},
		{name: "explain names of a dump, in the alias typed", argv: []string{"explain", "--dump", mixed, "deploy/"}, want: []string{"deploy/batch-exporter", "deploy/checkout", "deploy/recommender"}, directive: ":4"},
		{name: "explain replicasets of a dump", argv: []string{"explain", "--dump", scenarioDump("dev-payments"), "-n", "dev-payments", "rs/"}, want: []string{"rs/payments-api-6685d59959", "rs/payments-api-77c54dcdff"}, directive: ":4"},
		{name: "explain KIND NAME", argv: []string{"explain", "--dump", mixed, "deployment", ""}, want: []string{"batch-exporter", "checkout", "recommender"}, directive: ":4"},
		{name: "an unknown kind suggests nothing", argv: []string{"explain", "--dump", mixed, "svc/"}, directive: ":4"},
		{name: "explain pods of a dump", argv: []string{"explain", "--dump", scenarioDump("dev-web"), "po/"}, want: []string{"po/web-frontend-59797f96c5-j2fl8", "po/web-frontend-59797f96c5-j4lcg", "po/web-frontend-59797f96c5-wv7p8"}, directive: ":4"},
		{name: "explain names of the demo", argv: []string{"explain", "--demo", "sts/"}, want: []string{"sts/telemetry-store"}, directive: ":4"},
		{name: "namespaces of the demo", argv: []string{"audit", "--demo", "-n", ""}, want: []string{"telemetry"}, directive: ":4"},
		{name: "audit kinds", argv: []string{"audit", ""}, want: []string{"deployment/", "statefulset/", "daemonset/", "replicaset/", "cronjob/", "job/", "pod/"}, directive: ":6"},
		{name: "audit TYPE/NAME after another leaves it out", argv: []string{"audit", "--dump", mixed, "deploy/checkout", "deploy/"}, want: []string{"deploy/batch-exporter", "deploy/recommender"}, directive: ":4"},
		{name: "audit NAMEs after a TYPE leave out those typed", argv: []string{"audit", "--dump", mixed, "deployment", "checkout", ""}, want: []string{"batch-exporter", "recommender"}, directive: ":4"},
		{name: "subcommands", argv: []string{""}, want: []string{"audit", "completion", "dump", "explain", "help", "preflight", "rollout", "serve", "version"}, directive: ":4"},
		{name: "preflight formats", argv: []string{"preflight", "-o", ""}, want: []string{"table", "json", "yaml", "markdown"}, directive: ":4"},
		{name: "rollout names of a dump", argv: []string{"rollout", "--dump", mixed, "deployment/"}, want: []string{"deployment/batch-exporter", "deployment/checkout", "deployment/recommender"}, directive: ":4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, directive := complete(t, tt.argv...)
			if strings.Join(got, " ") != strings.Join(tt.want, " ") || directive != tt.directive {
				t.Errorf("__complete %q = %q %s, want %q %s", tt.argv, got, directive, tt.want, tt.directive)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	out, _, err := run(t, nil, hooks{}, "version", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var v VersionInfo
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.Version == "" || v.GoVersion != runtime.Version() || v.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("version -o json: %v %+v\n%s", err, v, out)
	}
	out, _, err = run(t, nil, hooks{}, "version", "-o", "yaml")
	if err != nil || !strings.Contains(out, "goVersion: "+runtime.Version()+"\n") || !strings.Contains(out, "version: "+v.Version+"\n") {
		t.Errorf("version -o yaml: %v\n%s", err, out)
	}
	out, _, err = run(t, nil, hooks{}, "version")
	if err != nil || !strings.HasPrefix(out, "kubectl-diagnose "+v.Version) {
		t.Errorf("version: %v %q", err, out)
	}
	_, _, err = run(t, nil, hooks{}, "version", "-o", "xml")
	checkUsageError(t, err, `unknown output format "xml"; use json or yaml`)

	version = "v1.2.3"
	t.Cleanup(func() { version = "" })
	out, _, err = run(t, nil, hooks{}, "--version")
	if err != nil || !strings.HasPrefix(out, "kubectl diagnose version v1.2.3") {
		t.Errorf("--version: %v %q", err, out)
	}
	if _, _, err := run(t, nil, hooks{}, "-v"); err == nil || err.Error() != "flag needs an argument: 'v' in -v; see 'kubectl diagnose --help'" {
		t.Errorf("-v alone: %v; kubectl users read it as verbosity, which takes a level, not --version", err)
	}
}

func TestVerbosity(t *testing.T) {
	var klogFlags goflag.FlagSet
	klog.InitFlags(&klogFlags)
	t.Cleanup(func() { // klog's levels are the process's
		_ = klogFlags.Set("v", "0")
		_ = klogFlags.Set("vmodule", "")
	})
	for _, argv := range [][]string{{"audit", "-v", "6"}, {"--v=6", "audit"}, {"audit", "-v=6"}} {
		_ = klogFlags.Set("v", "0")
		p, err := parseArgs(argv...)
		if err != nil || p.audit == nil {
			t.Fatalf("%q: %v", argv, err)
		}
		// client-go logs each request and its answer at 6 (transport/round_trippers.go).
		if !klog.V(6).Enabled() || klog.V(7).Enabled() {
			t.Errorf("%q: klog level is not 6", argv)
		}
	}
	_ = klogFlags.Set("v", "0")
	if _, err := parseArgs("audit", "--vmodule", "round_trippers=8"); err != nil || klog.V(1).Enabled() {
		t.Errorf("--vmodule: %v; level %v outside the module", err, klog.V(1).Enabled())
	}
}

func TestUsageSaysKubectlDiagnose(t *testing.T) {
	for _, argv := range [][]string{{"--help"}, {"audit", "--help"}, {"explain", "--help"}} {
		out, _, err := run(t, nil, hooks{}, argv...)
		if err != nil {
			t.Fatal(err)
		}
		usage := out[strings.Index(out, "Usage:"):]
		if !strings.Contains(usage, "  kubectl diagnose ") || strings.Contains(usage, "kubectl-diagnose") {
			t.Errorf("%v: usage does not read as the kubectl plugin:\n%s", argv, out)
		}
	}
}

func TestVersionStampedByTheReleaseBuild(t *testing.T) {
	version, commit = "v0.3.0", "0123456789abcdef0123456789abcdef01234567"
	t.Cleanup(func() { version, commit = "", "" })
	if v := Info(); v.Version != "v0.3.0" || v.GitCommit != commit {
		t.Errorf("Info() = %+v", v)
	}
	if v := Version(); v != "v0.3.0 (0123456789ab)" {
		t.Errorf("Version() = %q", v)
	}
}
