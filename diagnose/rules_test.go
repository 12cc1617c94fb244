package diagnose

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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

// TestRulesDoc keeps docs/rules.md generated from the catalogue; run with -update after
// changing a rule.
func TestRulesDoc(t *testing.T) {
	want := rulesDocHeader + RulesMarkdown()
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
	// Every rule the code uses is in the catalogue: the IDs declared in rules.go.
	src, err := os.ReadFile("rules.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`RuleID = "([^"]+)"`).FindAllStringSubmatch(string(src), -1) {
		if !seen[RuleID(m[1])] {
			t.Errorf("rule %s is declared but not catalogued", m[1])
		}
	}
	if got := ruleInfo(RuleMemoryLimit); !got.Outside {
		t.Errorf("memory-limit must be an outside rule: an input can outgrow a limit that served")
	}
	if got := ruleInfo(RuleEnvKeyNotFound); got.Outside {
		t.Errorf("env-key-not-found is intrinsic to the spec")
	}
}
