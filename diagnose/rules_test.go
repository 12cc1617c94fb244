package diagnose

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
)

// rulesDoc is the generated rules section of the documentation.
var rulesDoc = filepath.Join("..", "docs", "rules.md")

const rulesDocHeader = `# Suspect rules

A suspect is a spec field that probably causes a workload's failure: its rule ID, the object
(` + "`Kind/name`" + `), the field path in ` + "`k8s.io/apimachinery/pkg/util/validation/field`" + ` notation, the value,
the value in the last revision that served, a confidence and a reason. Suspects are ranked by
score, then object and path, so the order is stable.

- Specific rules read one unambiguous message (a missing Secret key, a 404 from a probe, a
  scheduler reason) and point at the one field it implicates.
- The general rule (` + "`named-in-failure`" + `) reads every failing event, container state and
  log line, takes out the endpoints, host:port pairs, URLs, paths, flags and variable names they name, and matches
  them against every string value of the pod template; the field holding a match is a suspect.
- A field that the failing revision changed scores higher than an unchanged field with the same
  evidence, so a changed field the evidence implicates ranks first.
- Rules marked *outside* describe failures whose cause lies outside the spec (a registry or an
  upstream that fails, an input that outgrew a limit) when the field did not change since the
  workload last served; the diagnosis then says ` + "`cause: dependency`" + `.

`

// rulesMarkdown renders the catalogue as the rules section of the documentation.
func rulesMarkdown() string {
	var b strings.Builder
	b.WriteString("<!-- Generated from the rule families (diagnose/rules: one family per file) by `go test ./diagnose -run TestRulesDoc -update`; do not edit. -->\n\n")
	b.WriteString("| Rule | Detects | Signal | Fix | Outside |\n|---|---|---|---|---|\n")
	for _, r := range Rules() {
		outside := ""
		if r.Outside {
			outside = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", r.ID, cellEscape(r.Title), cellEscape(r.Signal), cellEscape(r.Fix), outside)
	}
	return b.String()
}

func cellEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// TestRulesDoc keeps docs/rules.md generated from the catalogue; run with -update after
// changing a rule.
func TestRulesDoc(t *testing.T) {
	want := rulesDocHeader + rulesMarkdown()
	if *update {
		if err := os.WriteFile(rulesDoc, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(rulesDoc)
	if err != nil {
		t.Fatalf("read %s: %v (run go test ./diagnose -run TestRulesDoc -update)", rulesDoc, err)
	}
	if string(got) != want {
		t.Errorf("%s is not generated from the rule catalogue; run go test ./diagnose -run TestRulesDoc -update", rulesDoc)
	}
}

var reRuleID = regexp.MustCompile(`^[a-z]+(-[a-z]+)*$`)

func TestRuleCatalogue(t *testing.T) {
	seen := map[RuleID]bool{}
	for _, r := range Rules() {
		if seen[r.ID] {
			t.Errorf("rule %s listed twice", r.ID)
		}
		seen[r.ID] = true
		if !reRuleID.MatchString(string(r.ID)) {
			t.Errorf("rule ID %q is not lower-case words joined by dashes", r.ID)
		}
		if r.Title == "" || r.Fix == "" || r.Signal == "" {
			t.Errorf("rule %s lacks a title, signal or fix", r.ID)
		}
		if strings.HasSuffix(r.Title, ".") {
			t.Errorf("rule %s title ends with a period", r.ID)
		}
	}
	// Every rule the code declares is in the catalogue: the IDs are declared next to their
	// family's detector, in package rules' non-test files.
	files, err := filepath.Glob(filepath.Join("rules", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	declared := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`(Rule\w+)\s+RuleID = "([^"]+)"`).FindAllStringSubmatch(string(src), -1) {
			declared++
			if !seen[RuleID(m[2])] {
				t.Errorf("rule %s (%s, %s) is declared but not catalogued", m[2], m[1], f)
			}
		}
	}
	if declared != len(seen) {
		t.Errorf("%d rule IDs declared, %d catalogued", declared, len(seen))
	}
	if got := ruleInfo(rules.RuleMemoryLimit); !got.Outside {
		t.Errorf("memory-limit must be an outside rule: an input can outgrow a limit that served")
	}
	if got := ruleInfo(rules.RuleEnvKeyNotFound); got.Outside {
		t.Errorf("env-key-not-found is intrinsic to the spec")
	}
}

// TestRuleFamiliesRecordOwnRules runs every family's detector on every scenario and fixture
// workload that has suspects, and holds each detector to the rules its family owns or borrows:
// a rule recorded by a detector that does not declare it would drift from its documentation.
func TestRuleFamiliesRecordOwnRules(t *testing.T) {
	ran := 0
	for _, vd := range verdictDirs(t) {
		e := loadExpected(t, vd.Dir)
		s := loadDump(t, vd.Dir, e)
		s.Index()
		for _, w := range collectWorkloads(s) {
			d := diagnoseWorkload(s, w)
			if len(d.Suspects) == 0 || w.Template == nil {
				continue
			}
			r := newRanker(w)
			r.run()
			ran++
			if len(r.strays) > 0 {
				t.Errorf("%s %s/%s: detectors recorded rules their family does not own: %v", w.Kind, w.Namespace, w.Name, r.strays)
			}
		}
	}
	if ran < 10 {
		t.Errorf("ran the detectors on %d workloads with suspects, want at least 10", ran)
	}
}
