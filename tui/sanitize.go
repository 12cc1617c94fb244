package tui

import "github.com/kubediagnose/kubectl-diagnose/internal/report"

// tabWidth is how many spaces a tab in cluster text takes on screen; log lines keep their
// indentation.
const tabWidth = 4

// Sanitize makes a string from the cluster safe to draw on one line. It is report.Clean with
// tabs widened to tabWidth, so the console and the audit table clean text the same way; line
// breaks become spaces, and callers split multi-line text first (SanitizeLines) when lines matter.
func Sanitize(s string) string {
	return report.CleanTabs(s, tabWidth)
}

// SanitizeLines splits text on line breaks and sanitizes each line.
func SanitizeLines(s string) []string {
	return report.CleanLines(s, tabWidth)
}
