package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

// TestWaivedIsShown: a waived workload is listed in every format, marked, never hidden; the
// row formats mark its shape, explain and markdown say what the waiver names and why, and the
// report carries the waiver as data.
func TestWaivedIsShown(t *testing.T) {
	r := sampleReport()
	g := gateway()
	g.Waived = &diagnose.Waiver{What: "live-but-idle", Reason: "canary \x1b[2Jtraffic only"}
	r.Workloads = append(r.Workloads[:len(r.Workloads)-1], g)
	for format, want := range map[string][]string{
		"table":    {"live-but-idle,waived", "deployment/api-gateway"},
		"wide":     {"live-but-idle,waived", "deployment/api-gateway"},
		"markdown": {"| live-but-idle,waived | dev-gateway |", "- Waived: live-but-idle: canary traffic only"},
		"json":     {`"waived": {`, `"what": "live-but-idle"`, `"reason": "canary \u001b[2Jtraffic only"`},
		"yaml":     {"waived:", "what: live-but-idle"},
		"name":     {"deployment.apps/api-gateway"},
	} {
		var buf bytes.Buffer
		if err := printReport(&buf, r, format); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		for _, w := range want {
			if !strings.Contains(buf.String(), w) {
				t.Errorf("%s lacks %q:\n%s", format, w, buf.String())
			}
		}
		if format == "table" && strings.Count(buf.String(), ",waived") != 1 {
			t.Errorf("table marks %d rows waived, want the one:\n%s", strings.Count(buf.String(), ",waived"), buf.String())
		}
	}
	for format, want := range map[string]string{
		"text":     "Waived:    live-but-idle: canary traffic only\n",
		"markdown": "- Waived: live-but-idle: canary traffic only\n",
	} {
		var buf bytes.Buffer
		if err := PrintDiagnosis(&buf, &g, format); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), want) {
			t.Errorf("explain -o %s lacks %q:\n%s", format, want, buf.String())
		}
	}
	g.Waived.Reason = ""
	if got := WaiverText(g.Waived); got != "live-but-idle, no reason given (kubediagnose.dev/waive)" {
		t.Errorf("WaiverText without a reason = %q", got)
	}
}
