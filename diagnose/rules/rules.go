package rules

import (
	"cmp"
	"slices"
	"sync"
)

// RuleID names a suspect rule; IDs are stable.
type RuleID string

// RuleInfo describes one suspect rule for people: what it detects and how to fix it.
type RuleInfo struct {
	ID RuleID
	// Title says what the rule detects.
	Title string
	// Signal names the evidence the rule reads.
	Signal string
	// Fix is the hint shown with a suspect of this rule.
	Fix string
	// Outside is true when the rule's failure lies outside the spec unless the field changed
	// in the failing revision (a registry that is down, an upstream that refuses connections,
	// an input that outgrew a limit that used to be enough).
	Outside bool
}

// family is a set of suspect rules and the one detector that finds them. A detector reads the
// workload's signals once for all its rules (one pass over FitError messages serves seven), so
// rules come in families; each family is declared next to its detector, which makes a rule's ID,
// words and code one value: the catalogue, docs/rules.md and the ranker all range over families.
type family struct {
	// order is the family's place in the catalogue and the order the detectors run: on
	// equal scores the suspect recorded first for a field stands, so the specific families
	// come before the general rule and the changed-field rule.
	order  int
	name   string
	detect func(*ranker)
	rules  []RuleInfo
	// borrows lists rules of other families the detector also records, where its signal
	// implicates their field.
	borrows []RuleID
}

// owns reports whether the family's detector may record a suspect of the rule.
func (f *family) owns(id RuleID) bool {
	for _, r := range f.rules {
		if r.ID == id {
			return true
		}
	}
	for _, b := range f.borrows {
		if b == id {
			return true
		}
	}
	return false
}

// registry holds every family as its own file registers it (register), so that adding a
// family touches its file, its test and the generated docs, and no list. It is written only
// while the package's variables are initialized.
var registry []*family

// register adds a family to the catalogue and returns it.
func register(f family) *family {
	registry = append(registry, &f)
	return &f
}

// families is the suspect-rule catalogue in documentation order, which is also the order the
// detectors run; read once, after every family file registered its own.
var families = sync.OnceValue(func() []*family {
	fs := slices.Clone(registry)
	slices.SortStableFunc(fs, func(a, b *family) int { return cmp.Compare(a.order, b.order) })
	return fs
})

// rules is the flat catalogue, derived once from families.
var rules = sync.OnceValue(func() []RuleInfo { return flattenRules(families()) })

func flattenRules(fs []*family) []RuleInfo {
	var out []RuleInfo
	for _, f := range fs {
		out = append(out, f.rules...)
	}
	return out
}

// Catalogue returns the rule catalogue in documentation order.
func Catalogue() []RuleInfo {
	return append([]RuleInfo(nil), rules()...)
}

// Info returns the catalogue entry of a rule; an unknown rule has only its ID.
func Info(id RuleID) RuleInfo {
	for _, r := range rules() {
		if r.ID == id {
			return r
		}
	}
	return RuleInfo{ID: id}
}
