package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubediagnose/kubectl-diagnose/internal/report"
	"github.com/kubediagnose/kubectl-diagnose/test/testbed/secretdump"
	"github.com/kubediagnose/kubectl-diagnose/tui"
)

// valuesTemplate prints every suspect's values and reason, for the template formats.
const valuesTemplate = `{{range .workloads}}{{range .suspects}}{{.value}} {{.previousValue}} {{.reason}}{{"\n"}}{{end}}{{end}}`

// Every command that prints, in every format, hides the credentials the dump holds unless
// --show-secrets, and then shows them: the engine compared the real values either way.
func TestEveryOutputHidesCredentials(t *testing.T) {
	dir, err := secretdump.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	workload := "deploy/" + secretdump.Name
	var runs [][]string
	for _, f := range report.AllFormats() {
		switch {
		case f == "jsonpath" || strings.HasPrefix(f, "jsonpath"):
			f = "jsonpath={.workloads[*].suspects[*].value}"
		case strings.HasPrefix(f, "custom-columns"):
			f = "custom-columns=NAME:.name,VALUE:.suspects[*].value,PREVIOUS:.suspects[*].previousValue,WHY:.suspects[*].reason"
		case strings.HasPrefix(f, "go-template-file"):
			file := filepath.Join(t.TempDir(), "values.tmpl")
			if err := os.WriteFile(file, []byte(valuesTemplate), 0o600); err != nil {
				t.Fatal(err)
			}
			f = "go-template-file=" + file
		case strings.HasPrefix(f, "go-template"):
			f = "go-template=" + valuesTemplate
		}
		runs = append(runs, []string{"audit", "--dump", dir, "-o", f})
	}
	for _, f := range report.ExplainFormats {
		runs = append(runs, []string{"explain", workload, "--dump", dir, "-o", f})
	}
	runs = append(runs, []string{"--dump", dir}) // the root command off a terminal: the table
	for _, argv := range runs {
		t.Run(strings.Join(argv[:1], " ")+" "+argv[len(argv)-1], func(t *testing.T) {
			out, stderr, err := run(t, nil, hooks{}, argv...)
			if err != nil {
				t.Fatalf("%v: %v\n%s", argv, err, stderr)
			}
			for _, s := range secretdump.Secrets {
				if strings.Contains(out+stderr, s) {
					t.Errorf("%v shows %q", argv, s)
				}
			}
			shown, _, err := run(t, nil, hooks{}, append(argv, "--show-secrets")...)
			if err != nil {
				t.Fatal(err)
			}
			if argv[0] == "explain" || strings.HasSuffix(argv[len(argv)-1], "json") || strings.HasSuffix(argv[len(argv)-1], "yaml") {
				// The formats that print values: the password's change reads as two marks, and
				// --show-secrets prints both values.
				if !strings.Contains(out, "[redacted:") {
					t.Errorf("%v prints no mark:\n%s", argv, out)
				}
				if !strings.Contains(shown, secretdump.PasswordRev1) || !strings.Contains(shown, secretdump.PasswordRev2) {
					t.Errorf("%v --show-secrets does not print the passwords", argv)
				}
			}
		})
	}
}

// The console gets --show-secrets as a typed option; serve has no such flag at all.
func TestShowSecretsReachesTheConsoleAndNeverServe(t *testing.T) {
	for _, show := range []bool{false, true} {
		var got tui.Options
		argv := []string{"--dump", scenarioDump("dev-web")}
		if show {
			argv = append(argv, "--show-secrets")
		}
		_, _, err := run(t, nil, hooks{
			interactive: func() bool { return true },
			console:     func(_ context.Context, opts tui.Options) error { got = opts; return nil },
		}, argv...)
		if err != nil || got.ShowSecrets != show {
			t.Errorf("%v: console ShowSecrets %v (%v), want %v", argv, got.ShowSecrets, err, show)
		}
	}
	_, _, err := run(t, nil, hooks{runServe: func(*ServeOptions) error { return nil }}, "serve", "--show-secrets")
	if err == nil || !strings.Contains(err.Error(), "unknown flag: --show-secrets") {
		t.Errorf("serve --show-secrets: %v, want an unknown flag", err)
	}
}
