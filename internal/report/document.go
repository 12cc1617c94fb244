package report

import "io"

// WriteJSON writes any document as the json printer writes a report: indented, with every
// invisible character escaped. Other commands' documents (preflight's) print through it.
func WriteJSON(w io.Writer, v any) error { return writeJSON(w, v) }

// WriteYAML writes any document as the yaml printer writes a report.
func WriteYAML(w io.Writer, v any) error { return writeYAML(w, v) }

// MarkdownText makes cluster text safe as one line of markdown prose or a table cell.
func MarkdownText(s string) string { return mdText(s) }

// MarkdownCode writes s as inline code, safe in a table cell.
func MarkdownCode(s string) string { return mdCode(s) }
