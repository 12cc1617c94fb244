package diagnose

import (
	"strings"
	"testing"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
)

// normalizeEventTextByRegexp is normalizeEventText with both expressions always run.
func normalizeEventTextByRegexp(name, uid, m string) string {
	if name != "" {
		m = strings.ReplaceAll(m, name, "<name>")
	}
	if uid != "" {
		m = strings.ReplaceAll(m, uid, "<uid>")
	}
	m = strings.TrimPrefix(m, "(combined from similar events): ")
	m = generatedSuffix.ReplaceAllString(m, "$1-<suffix>")
	return facts.Key(backoffDuration.ReplaceAllString(m, "back-off <d>"))
}

// FuzzNormalizeEventText holds the literal checks in front of the expressions to them.
func FuzzNormalizeEventText(f *testing.F) {
	for _, s := range [][3]string{
		{"api-7d4b9c8f6-x2x9z", "u-1", "Back-off restarting failed container app in pod api-7d4b9c8f6-x2x9z_team(u-1)"},
		{"api", "", "Error creating: pods \"api-b8kq2\" is forbidden: exceeded quota"},
		{"web", "", "BACK-OFF 5m0s restarting"},
		{"web", "", "bac\u212a-off 10s restarting"},
		{"web", "", "back-ofF 1h2m3.5s"},
		{"", "", "Readiness probe failed: HTTP probe failed with statuscode: 503"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, name, uid, m string) {
		if got, want := normalizeEventText(name, uid, m), normalizeEventTextByRegexp(name, uid, m); got != want {
			t.Errorf("normalizeEventText(%q, %q, %q) = %q, the expressions say %q", name, uid, m, got, want)
		}
	})
}
