package cmd

import (
	"context"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/demo"
	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
	"github.com/kubediagnose/kubectl-diagnose/internal/kinds"
	"github.com/kubediagnose/kubectl-diagnose/internal/live"
	"github.com/kubediagnose/kubectl-diagnose/internal/preflight"
	"github.com/kubediagnose/kubectl-diagnose/internal/report"
	"github.com/kubediagnose/kubectl-diagnose/internal/rollout"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// completionTimeout bounds what a suggestion may wait for the cluster: a shell waits on it.
const completionTimeout = 5 * time.Second

// namedKinds are the KIND words explain and audit take, offered as KIND/ before a name is
// typed: every workload kind, and pod, which stands for its workload.
var namedKinds = append(kindWordsOf(func(*kinds.Workload) bool { return true }), "pod")

// rolloutKinds are the KIND words rollout takes: the kinds kubectl rollout follows.
var rolloutKinds = kindWordsOf(func(k *kinds.Workload) bool { return k.Rollout })

// kindWordsOf are the KIND words of the workload kinds keep accepts, from their adapters
// (internal/kinds), in the adapters' order.
func kindWordsOf(keep func(*kinds.Workload) bool) []string {
	var words []string
	for _, k := range kinds.Workloads {
		if keep(k) {
			words = append(words, strings.ToLower(k.Kind))
		}
	}
	return words
}

// registerCompletions adds dynamic completion: -n and explain's KIND/NAME from the dump or the
// cluster the flags name, --context from the kubeconfig, and the closed lists of -o, --fail-on
// and --sort-by. Cobra has parsed the other flags when these run, so --dump, --context and -n
// typed earlier on the line are honoured.
func registerCompletions(root *cobra.Command, source *SourceOptions) {
	must(root.RegisterFlagCompletionFunc("namespace", func(c *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
		return namespaceNames(c.Context(), source), cobra.ShellCompDirectiveNoFileComp
	}))
	must(root.RegisterFlagCompletionFunc("context", func(c *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		raw, err := source.ConfigFlags.ToRawKubeConfigLoader().RawConfig()
		if err != nil {
			cobra.CompDebugln("read kubeconfig: "+err.Error(), true)
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names []string
		for name := range raw.Contexts {
			names = append(names, name)
		}
		sort.Strings(names)
		if done, _ := splitLast(toComplete); done != "" && (c.Name() == "audit" || !c.HasParent()) {
			// A list of contexts, for audit and the console: the next name after those typed.
			typed := strings.Split(done, ",")
			var out []string
			for _, n := range names {
				if !slices.Contains(typed, n) {
					out = append(out, done+n)
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}))
	for _, c := range root.Commands() {
		switch c.Name() {
		case "audit":
			must(c.RegisterFlagCompletionFunc("output", auditFormats))
			must(c.RegisterFlagCompletionFunc("fail-on", completeFailOn))
			must(c.RegisterFlagCompletionFunc("sort-by", cobra.FixedCompletions(report.SortKeys, cobra.ShellCompDirectiveNoFileComp)))
			c.ValidArgsFunction = func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				return completeTargets(c.Context(), source, args, toComplete)
			}
		case "explain":
			must(c.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(report.ExplainFormats, cobra.ShellCompDirectiveNoFileComp)))
			c.ValidArgsFunction = func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				return completeWorkload(c.Context(), source, namedKinds, args, toComplete)
			}
		case "rollout":
			must(c.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(rollout.Formats, cobra.ShellCompDirectiveNoFileComp)))
			c.ValidArgsFunction = func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				return completeWorkload(c.Context(), source, rolloutKinds, args, toComplete)
			}
		case "preflight":
			must(c.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(preflight.Formats, cobra.ShellCompDirectiveNoFileComp)))
			must(c.MarkFlagFilename("filename", "yaml", "yml", "json"))
			c.ValidArgsFunction = cobra.NoFileCompletions
		case "version":
			must(c.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"json", "yaml"}, cobra.ShellCompDirectiveNoFileComp)))
		}
	}
}

// must panics on a registration error, which only a misspelt flag name causes: a programming
// error the tests meet at once.
func must(err error) {
	if err != nil {
		panic(err)
	}
}

// auditFormats offers the -o words; the template formats end at "=", where their argument goes.
func auditFormats(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	out := append(slices.Clone(report.Formats), report.FormatName)
	for _, f := range report.TemplateFormats {
		out = append(out, f+"=")
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// completeFailOn completes the last shape of a comma-separated --fail-on list, leaving out the
// shapes already typed.
func completeFailOn(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	done, _ := splitLast(toComplete)
	typed := strings.Split(done, ",")
	words := []string{failOnBroken}
	for _, s := range diagnose.Shapes {
		words = append(words, string(s))
	}
	var out []string
	for _, w := range words {
		if !slices.Contains(typed, w) {
			out = append(out, done+w)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// splitLast splits "a,b,c" into "a,b," and "c".
func splitLast(s string) (string, string) {
	i := strings.LastIndex(s, ",")
	return s[:i+1], s[i+1:]
}

// completeWorkload offers KIND/ (of kinds) and then KIND/NAME (or NAME after a separate KIND
// word) from the source, for a command that takes one.
func completeWorkload(ctx context.Context, source *SourceOptions, kinds []string, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	none := cobra.ShellCompDirectiveNoFileComp
	switch {
	case len(args) == 1 && !strings.Contains(args[0], "/"):
		kind, ok := kindOf(args[0])
		if !ok {
			return nil, none
		}
		return workloadNames(ctx, source, kind), none
	case len(args) > 0:
		return nil, none
	}
	return completeRef(ctx, source, kinds, toComplete)
}

// completeTargets completes audit's arguments, as kubectl get's: another TYPE/NAME after those,
// or another NAME of the TYPE typed first.
func completeTargets(ctx context.Context, source *SourceOptions, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	none := cobra.ShellCompDirectiveNoFileComp
	if len(args) > 0 && !strings.Contains(args[0], "/") {
		kind, ok := kindOf(args[0])
		if !ok || strings.Contains(args[0], ",") {
			return nil, none
		}
		var out []string
		for _, n := range workloadNames(ctx, source, kind) {
			if !slices.Contains(args[1:], n) {
				out = append(out, n)
			}
		}
		return out, none
	}
	out, directive := completeRef(ctx, source, namedKinds, toComplete)
	return slices.DeleteFunc(out, func(ref string) bool { return slices.Contains(args, ref) }), directive
}

// completeRef completes one KIND/NAME: KIND/ of kinds before the slash, the source's names of
// the kind after it, in the alias typed.
func completeRef(ctx context.Context, source *SourceOptions, kinds []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	none := cobra.ShellCompDirectiveNoFileComp
	word, _, typedName := strings.Cut(toComplete, "/")
	if !typedName {
		out := make([]string, 0, len(kinds))
		for _, k := range kinds {
			out = append(out, k+"/")
		}
		return out, none | cobra.ShellCompDirectiveNoSpace
	}
	kind, ok := kindOf(word)
	if !ok || !slices.Contains(kinds, strings.ToLower(kind)) {
		return nil, none
	}
	var out []string
	for _, n := range workloadNames(ctx, source, kind) {
		out = append(out, word+"/"+n)
	}
	return out, none
}

// namespaceNames lists the namespaces of the dump, or of the cluster.
func namespaceNames(ctx context.Context, source *SourceOptions) []string {
	ctx, cancel := context.WithTimeout(ctx, completionTimeout)
	defer cancel()
	if source.Demo {
		snap, err := demo.Source().Snapshot(ctx)
		if err != nil {
			return nil
		}
		return snap.Namespaces
	}
	if source.DumpPath != "" {
		snap, err := dump.Source{Path: source.DumpPath, Stdin: source.Stdin}.Snapshot(ctx)
		if err != nil {
			cobra.CompDebugln("read dump: "+err.Error(), true)
			return nil
		}
		return snap.Namespaces
	}
	src, err := live.New(source.ConfigFlags, live.Options{})
	if err != nil {
		cobra.CompDebugln(err.Error(), true)
		return nil
	}
	names, err := src.NamespaceNames(ctx)
	if err != nil {
		cobra.CompDebugln(err.Error(), true)
	}
	return names
}

// workloadNames lists the names of one workload kind, or of pods, in the namespaces -n/-A
// select, from the dump or the cluster.
func workloadNames(ctx context.Context, source *SourceOptions, kind string) []string {
	ctx, cancel := context.WithTimeout(ctx, completionTimeout)
	defer cancel()
	if err := source.Complete(); err != nil {
		return nil
	}
	if source.DumpPath == "" && !source.Demo {
		src, err := live.New(source.ConfigFlags, live.Options{Namespaces: source.namespaces(), AllNamespaces: source.AllNamespaces})
		if err != nil {
			cobra.CompDebugln(err.Error(), true)
			return nil
		}
		names, err := src.WorkloadNames(ctx, kind)
		if err != nil {
			cobra.CompDebugln(err.Error(), true)
		}
		return names
	}
	src, err := source.open()
	if err != nil {
		return nil
	}
	snap, err := src.Snapshot(ctx)
	if err != nil {
		cobra.CompDebugln(err.Error(), true)
		return nil
	}
	seen := map[string]bool{}
	add := func(k, name string) {
		if k == kind {
			seen[name] = true
		}
	}
	if k := snapshot.KindNamed(kind); k != nil && (k.Workload || kind == kindPod) {
		k.Each(snap, func(o runtime.Object) {
			if m, err := meta.Accessor(o); err == nil {
				add(k.Kind, m.GetName())
			}
		})
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
