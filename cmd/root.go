package cmd

import (
	"context"
	goflag "flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/component-base/logs/klogflags"
	"k8s.io/klog/v2"

	"github.com/kubediagnose/kubectl-diagnose/internal/memory"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
	"github.com/kubediagnose/kubectl-diagnose/tui"
)

// RootOptions are the options of `kubectl-diagnose` without a subcommand.
type RootOptions struct {
	genericiooptions.IOStreams
	Source *SourceOptions
	// LabelSelector (-l) and FieldSelector (--field-selector) pick workloads, as audit's do.
	LabelSelector, FieldSelector string
	// Interactive reports whether In and Out are a terminal; tests replace it.
	Interactive func() bool
	// Console runs the console; tests replace it.
	Console func(ctx context.Context, opts tui.Options) error
}

// hooks let tests stop a command after parsing (run*) or replace its side effects.
type hooks struct {
	runRoot      func(*RootOptions) error
	runAudit     func(*AuditOptions) error
	runExplain   func(*ExplainOptions) error
	runRollout   func(*RolloutOptions) error
	runServe     func(*ServeOptions) error
	runPreflight func(*PreflightOptions) error
	// interactive and console, when set, replace the terminal check and the console.
	interactive func() bool
	console     func(ctx context.Context, opts tui.Options) error
	// argv0 is how the process was started (os.Args[0]), which names the command in usage and
	// hints (CommandName); empty reads as kubectl-diagnose.
	argv0 string
	// memoryPolicy sets the process's memory policy as a command starts and returns the call
	// that settles it (memory.ForReads); nil, in tests that run commands in their own process,
	// leaves the collector alone.
	memoryPolicy func() (settle func())
}

// NewRootCmd returns the kubectl-diagnose command tree, named in usage lines and hints as the
// process was started (CommandName).
func NewRootCmd(streams genericiooptions.IOStreams) *cobra.Command {
	return newRootCmd(streams, hooks{argv0: os.Args[0], memoryPolicy: memory.ForReads})
}

func newRootCmd(streams genericiooptions.IOStreams, h hooks) *cobra.Command {
	name := "kubectl diagnose"
	if h.argv0 != "" {
		name = CommandName(h.argv0)
	}
	source := NewSourceOptions(streams.In)
	o := &RootOptions{IOStreams: streams, Source: source, Interactive: h.interactive, Console: h.console}
	if o.Interactive == nil {
		o.Interactive = func() bool { return isTerminal(streams.In) && isTerminal(streams.Out) }
	}
	if o.Console == nil {
		o.Console = tui.Run
	}
	cmd := &cobra.Command{
		Use:   "kubectl-diagnose",
		Short: "Say why a workload at its declared count serves nothing, and which spec field is to blame",
		Long: `kubectl-diagnose classifies every workload by what its copies actually do (never-starts,
starts-and-dies, live-but-idle, progressing, healthy) and names the spec field most likely
responsible, and whether the fault is in the spec or in something it depends on.

Without a subcommand it opens the interactive console on a terminal, and prints the audit
table otherwise. It only reads: get, list and watch.`,
		Example: `  # The console on the current context's namespace
  kubectl diagnose

  # The console on a built-in demo, no cluster needed
  kubectl diagnose --demo

  # A saved dump, all its namespaces
  kubectl diagnose --dump ./incident`,
		// Usage lines and hints read as the user typed the command.
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: name},
		Version:     Version(),
		Args:        rootArgs,
		// cobra's default, set here: rootArgs asks for suggestions, not cobra.
		SuggestionsMinimumDistance: 2,
		SilenceErrors:              true,
		SilenceUsage:               true,
		PersistentPreRunE: func(c *cobra.Command, _ []string) error {
			if h.memoryPolicy != nil {
				source.settleMemory = h.memoryPolicy()
			}
			return verbosity(c)
		},
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.Source.Complete(); err != nil {
				return err
			}
			sel, err := snapshot.ParseSelector(o.LabelSelector, o.FieldSelector)
			if err != nil {
				return &UsageError{Err: err}
			}
			o.Source.Selector = sel
			if err := o.Validate(); err != nil {
				return err
			}
			if h.runRoot != nil {
				return h.runRoot(o)
			}
			return o.Run(c.Context())
		},
	}
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if args := c.Flags().Args(); !c.HasParent() && len(args) > 0 {
			// `audti --fail-on broken`: the flag is unknown because the command is.
			return rootArgs(c, args)
		}
		return &UsageError{Err: flagError{err: err, command: c.CommandPath()}}
	})
	source.AddFlags(cmd.PersistentFlags())
	addKlogFlags(cmd.PersistentFlags())
	source.AddFleetFlags(cmd.Flags())
	source.addShowSecretsFlag(cmd.Flags())
	cmd.Flags().StringVarP(&o.LabelSelector, "selector", "l", "", "Label selector of the workloads to show (e.g. -l 'tier=web,env!=dev'); sent to the API server, applied alike to a dump. A Deployment's ReplicaSets follow it.")
	cmd.Flags().StringVar(&o.FieldSelector, "field-selector", "", "Field selector of the workloads to show: metadata.name and metadata.namespace (e.g. --field-selector metadata.name=api).")
	source.AddDemoFlag(cmd.Flags(), "Open the console on a built-in demo (namespace telemetry); no cluster needed.")
	// Declared here so that cobra's --version takes no -v: that is klog's verbosity, as in kubectl.
	cmd.Flags().Bool("version", false, "Print the version and exit.")

	cmd.AddCommand(
		NewCmdAudit(streams, source, h.runAudit),
		NewCmdExplain(streams, source, h.runExplain),
		NewCmdRollout(streams, source, h.runRollout),
		NewCmdServe(streams, source, h.runServe),
		NewCmdPreflight(streams, source, h.runPreflight),
		NewCmdDump(streams, source.ConfigFlags),
		NewCmdVersion(streams),
	)
	registerCompletions(cmd, source)
	return cmd
}

// Validate rejects contradictory flags.
func (o *RootOptions) Validate() error {
	return o.Source.Validate()
}

// Run opens the console on a terminal and prints the audit table otherwise.
func (o *RootOptions) Run(ctx context.Context) error {
	if o.Source.Fleet.On() {
		return o.runFleet(ctx)
	}
	interactive := o.Interactive()
	o.Source.forConsole = interactive
	src, err := o.Source.open()
	if err != nil {
		return err
	}
	if !interactive {
		snap, r, err := src.diagnose(ctx)
		if err != nil {
			return err
		}
		audit := &AuditOptions{IOStreams: o.IOStreams, Source: o.Source, Output: "table"}
		return audit.print(snap, r, src.namespaceLabel(o.Source))
	}
	return o.Console(ctx, o.consoleOptions(src))
}

// consoleOptions turns the flags and the opened source into the console's typed options.
func (o *RootOptions) consoleOptions(src *openedSource) tui.Options {
	opts := tui.Options{
		In:            o.In,
		Out:           o.Out,
		Source:        src.Source,
		At:            o.Source.At,
		Namespaces:    o.Source.namespaces(),
		AllNamespaces: o.Source.AllNamespaces || (src.live == nil && o.Source.Namespace == ""),
		SourceLabel:   src.Label,
		Context:       src.Context,
		Selector:      o.selectorLabel(),
		ShowSecrets:   o.Source.ShowSecrets,
	}
	if src.live != nil {
		// --at reaches the console through At; the source goes in unwrapped.
		opts.Source = src.live
		opts.Namespaces = src.liveNamespaces
		opts.SwitchNamespace = src.switchNamespace
		opts.Watch = src.consoleWatch
		opts.ListNamespaces = src.listNamespaces
		if o.Source.Metrics.Config != nil {
			opts.MetricsRefresh = o.Source.Metrics.Refresh
		}
	}
	return opts
}

// selectorLabel is -l and --field-selector as typed, for the console's header.
func (o *RootOptions) selectorLabel() string {
	var parts []string
	if o.LabelSelector != "" {
		parts = append(parts, "-l "+o.LabelSelector)
	}
	if o.FieldSelector != "" {
		parts = append(parts, "--field-selector "+o.FieldSelector)
	}
	return strings.Join(parts, " ")
}

// rootArgs rejects anything that is not a subcommand, suggesting the commands it may be a typo
// of (cobra's SuggestionsFor, within SuggestionsMinimumDistance), or, for a workload, the
// commands that take one.
func rootArgs(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
	if s := c.SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(s, " or "))
	} else if kind, name, ok := strings.Cut(args[0], "/"); ok && name != "" && knownKind(kind) {
		msg += fmt.Sprintf(" (did you mean %s explain %s or %s audit %s?)", c.CommandPath(), args[0], c.CommandPath(), args[0])
	}
	return usageErrorf("%s; see '%s --help'", msg, c.CommandPath())
}

// addKlogFlags binds klog's -v and --vmodule, the ones kubectl keeps (component-base's klogflags,
// through logs.AddFlags): -v 6 shows every API request and its answer, -v 8 their bodies.
func addKlogFlags(fs *pflag.FlagSet) {
	var gofs goflag.FlagSet
	klogflags.Init(&gofs)
	gofs.VisitAll(func(f *goflag.Flag) {
		pf := pflag.PFlagFromGoFlag(f)
		if f.Name == "v" {
			pf.Usage += " (to stderr; the console draws over it, so redirect it: 2>diagnose.log)"
		}
		fs.AddFlag(pf)
	})
}

// verbosity lets klog write again when -v asks for its lines: main discards them otherwise, as
// client-go logs beside the errors it returns, which are printed once.
func verbosity(c *cobra.Command) error {
	f := c.Flags().Lookup("v")
	if f == nil || !f.Changed {
		return nil
	}
	if v, err := strconv.Atoi(f.Value.String()); err == nil && v > 0 {
		klog.ClearLogger()
	}
	return nil
}

// flagError adds where to find help to a flag parsing error.
type flagError struct {
	err     error
	command string
}

func (e flagError) Error() string { return e.err.Error() + "; see '" + e.command + " --help'" }
func (e flagError) Unwrap() error { return e.err }

func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}
