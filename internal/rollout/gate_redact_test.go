package rollout

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
	"github.com/kubediagnose/kubectl-diagnose/internal/redact"
	"github.com/kubediagnose/kubectl-diagnose/test/testbed/secretdump"
)

// The gate decides on, reports and prints a diagnosis whose credentials are hidden.
func TestGateReportsTheRedactedDiagnosis(t *testing.T) {
	dir, err := secretdump.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := dump.Read(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	snaps, errs := feed(now(s))
	g := &Gate{
		Target:  Target{Kind: secretdump.Kind, Namespace: secretdump.Namespace, Name: secretdump.Name},
		Timeout: 10 * time.Second, Redact: redact.New(),
	}
	res, err := g.Run(context.Background(), snaps, errs)
	if err != nil {
		t.Fatal(err)
	}
	if res.Diagnosis == nil || res.Decision.Phase != PhaseFailed {
		t.Fatalf("result %+v, want the failed rollout's diagnosis", res.Decision)
	}
	for _, format := range Formats {
		var b bytes.Buffer
		if err := PrintResult(&b, res, format); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "[redacted:") {
			t.Errorf("-o %s prints no mark: is the diagnosis the one with the credentials?", format)
		}
		for _, secret := range secretdump.Secrets {
			if strings.Contains(b.String(), secret) {
				t.Errorf("-o %s prints %q", format, secret)
			}
		}
	}
}
