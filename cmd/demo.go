package cmd

import "github.com/kubediagnose/kubectl-diagnose/internal/demo"

// openDemo opens the embedded demo dump, scoped by -n and --at like any dump.
func openDemo(o *SourceOptions) *openedSource {
	return &openedSource{
		Source: &scopedSource{src: demo.Source(), namespaces: o.namespaces(), at: o.At, origin: "the demo", selector: o.Selector},
		Label:  "demo",
		redact: o.redactor(),
	}
}
