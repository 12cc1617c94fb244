package cmd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDumpLimitFlags(t *testing.T) {
	p, err := parseArgs("audit", "--dump", "-", "--max-object-size", "8", "--max-dump-size", "100")
	if err != nil {
		t.Fatal(err)
	}
	if o := p.audit.Source; o.MaxObjectSizeMiB != 8 || o.MaxDumpSizeMiB != 100 {
		t.Errorf("limits %d and %d MiB, want 8 and 100", o.MaxObjectSizeMiB, o.MaxDumpSizeMiB)
	}
	p, err = parseArgs("audit")
	if err != nil {
		t.Fatal(err)
	}
	if o := p.audit.Source; o.MaxObjectSizeMiB != 64 || o.MaxDumpSizeMiB != 4096 {
		t.Errorf("default limits %d and %d MiB, want 64 and 4096", o.MaxObjectSizeMiB, o.MaxDumpSizeMiB)
	}
	_, err = parseArgs("audit", "--max-object-size", "0")
	checkUsageError(t, err, "--max-object-size and --max-dump-size take 1 to 1048576 MiB, got 0 and 4096")
}

func TestDumpReaderThroughTheCommand(t *testing.T) {
	// A manifest without a namespace reads into -n, as kubectl reads it.
	manifest := []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: web}}\n" +
		"  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: web, image: nginx}]}\n")
	out, _, err := run(t, manifest, hooks{}, "audit", "--dump", "-", "-n", "shop", "-o", "json")
	if err != nil || !strings.Contains(out, `"namespace": "shop"`) {
		t.Errorf("manifest with -n shop: %v\n%s", err, out)
	}
	// An object over --max-object-size stops the read with the flag's name.
	_, _, err = run(t, []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":{"a":"`+strings.Repeat("x", 2<<20)+`"}}}`), hooks{}, "audit", "--dump", "-", "--max-object-size", "1")
	if err == nil || !strings.Contains(err.Error(), "object at stdin:0 is larger than 1 MiB; --max-object-size raises the limit") || ExitCode(err) != ExitError {
		t.Errorf("oversized object: %v (exit %d)", err, ExitCode(err))
	}
	// An --at before every object is said, on stderr.
	_, errOut, err := run(t, nil, hooks{}, "audit", "--dump", scenarioDump("dev-web"), "--at", "2020-01-01T00:00:00Z")
	if err != nil || !strings.Contains(errOut, "warning: --at 2020-01-01T00:00:00Z is before every object in the dump") {
		t.Errorf("early --at: %v, stderr %q", err, errOut)
	}
}

func TestDumpDuplicateWarning(t *testing.T) {
	deployments, err := os.ReadFile(filepath.Join(scenarioDump("dev-web"), "dev-web", "deployments.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	edited := strings.Replace(string(deployments), `"replicas": 3,`, `"replicas": 7,`, 1)
	for name, data := range map[string]string{"a/deployments.json": string(deployments), "b/deployments.json": edited} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, errOut, err := run(t, nil, hooks{}, "audit", "--dump", dir)
	if err != nil || !strings.Contains(errOut, "warning: could not read Deployment in namespace dev-web: web-frontend is in the dump twice with different content") {
		t.Errorf("duplicate: %v, stderr %q", err, errOut)
	}
}

func TestDiagnoseStopsOnCancel(t *testing.T) {
	o := NewSourceOptions(nil)
	o.DumpPath = scenarioDump("dev-web")
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	src, err := o.open()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := src.diagnose(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("diagnose on a cancelled context = %v", err)
	}
}
