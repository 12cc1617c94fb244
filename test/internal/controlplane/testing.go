package controlplane

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
)

// RunTests starts one control plane, hands it to use, runs the package's tests and stops it.
// Call it from TestMain: os.Exit(controlplane.RunTests(m, opts, func(c *ControlPlane) { cp = c })).
// A control plane that cannot start (missing assets included) fails the run with the reason.
func RunTests(m *testing.M, opts Options, use func(*ControlPlane)) int {
	if opts.Logf == nil {
		opts.Logf = func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	}
	cp, err := Start(context.Background(), opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: control plane: %v\n", err)
		return 1
	}
	defer cp.Stop()
	use(cp)
	return m.Run()
}

// StartT starts a control plane for one test (or benchmark) and stops it when the test ends.
// Prefer one per package through RunTests: a start costs several seconds.
func StartT(t testing.TB, opts Options) *ControlPlane {
	t.Helper()
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	cp, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("control plane: %v", err)
	}
	t.Cleanup(cp.Stop)
	return cp
}

// Namespace creates a namespace for one test, named after it, and deletes it when the test ends.
func (cp *ControlPlane) Namespace(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns, err := cp.CreateNamespace(ctx, namespacePrefix(t.Name()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := cp.DeleteNamespace(ctx, ns); err != nil {
			t.Error(err)
		}
	})
	return ns
}

// NewIdentity is CreateIdentity for a test; it fails the test on error.
func (cp *ControlPlane) NewIdentity(t testing.TB, namespace string, rules []rbacv1.PolicyRule) *Identity {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id, err := cp.CreateIdentity(ctx, namespace, rules)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// namespacePrefix turns a test name into a DNS label prefix (GenerateName adds 5 characters).
func namespacePrefix(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			if s := b.String(); s != "" && !strings.HasSuffix(s, "-") {
				b.WriteByte('-')
			}
		}
	}
	p := strings.Trim(b.String(), "-")
	if len(p) > 40 {
		p = strings.Trim(p[:40], "-")
	}
	if p == "" {
		p = "test"
	}
	return p + "-"
}
