package diagnose

import "github.com/kubediagnose/kubectl-diagnose/diagnose/rules"

// RuleID names a suspect rule; IDs are stable. The rules and their families live in package
// rules, one family per file.
type RuleID = rules.RuleID

// RuleInfo describes one suspect rule for people: what it detects and how to fix it.
type RuleInfo = rules.RuleInfo

// The rules front ends name on their own, re-exported for them.
const (
	RuleEnvVarUnset     = rules.RuleEnvVarUnset
	RuleImageNotFound   = rules.RuleImageNotFound
	RuleMemoryLimit     = rules.RuleMemoryLimit
	RuleNamedInFailure  = rules.RuleNamedInFailure
	RuleProbePath       = rules.RuleProbePath
	RuleServiceSelector = rules.RuleServiceSelector
)

// Rules returns the rule catalogue in documentation order.
func Rules() []RuleInfo { return rules.Catalogue() }

// ruleInfo returns the catalogue entry of a rule.
func ruleInfo(id RuleID) RuleInfo { return rules.Info(id) }
