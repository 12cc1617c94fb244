package cmd

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"

	"github.com/kubediagnose/kubectl-diagnose/internal/live"
	"github.com/kubediagnose/kubectl-diagnose/internal/preflight"
)

// PreflightOptions are the options of `kubectl-diagnose preflight`.
type PreflightOptions struct {
	genericiooptions.IOStreams
	Source *SourceOptions

	// Filenames are -f: files, directories or - for stdin.
	Filenames []string
	// CheckReferences is --check-references: look up the ConfigMaps and Secrets the templates
	// name, by metadata only.
	CheckReferences bool
	// Output is -o: one of preflight.Formats.
	Output string

	// connect resolves the kubeconfig into clients and the context's namespace; tests replace it.
	connect func(o *PreflightOptions) (preflight.Clients, string, error)
}

// NewCmdPreflight returns the preflight command; runF, when set, replaces Run.
func NewCmdPreflight(streams genericiooptions.IOStreams, source *SourceOptions, runF func(*PreflightOptions) error) *cobra.Command {
	o := &PreflightOptions{IOStreams: streams, Source: source, connect: connectPreflight}
	checks := make([]string, 0, len(preflight.Checks()))
	for _, c := range preflight.Checks() {
		checks = append(checks, fmt.Sprintf("  %-18s %s", c[0], wrapIndent(c[1], 58, 21)))
	}
	cmd := &cobra.Command{
		Use:   "preflight -f FILE|DIR|- [--check-references] [-o FORMAT]",
		Short: "Check Deployment, StatefulSet and DaemonSet manifests against the live cluster before applying them",
		Long: `Read Deployment, StatefulSet and DaemonSet manifests (multi-document YAML or JSON, a List,
helm template or kustomize output) and check each against the live cluster before it is
applied. It only reads (get and list); nothing is applied. Services, ServiceAccounts,
Namespaces, ConfigMaps and Secrets in the same stream count as applied with the workloads;
other kinds are skipped. Objects without a namespace take -n, else the context's.

Checks:
` + strings.Join(checks, "\n") + `

ConfigMap and Secret references are looked up only with --check-references, and then by name
and metadata only: each lookup is a get that accepts PartialObjectMetadata alone, so no data is
sent, and the API server's audit log shows one get per referenced name.

Each workload also gets the diff against its live current revision, riskiest first (by what
the engine would blame if the new revision failed: an env value that names an endpoint, the
image, a probe), and the signal gaps of the new spec.

Exit 0 when no check fails (warnings allowed), 6 when one fails, 1 when the manifests or the
cluster cannot be read.`,
		Example: `  # Check a chart's output before installing it
  helm template shop ./chart | kubectl diagnose preflight -f - -n shop

  # Check a kustomize overlay, its ConfigMap and Secret references too, as a CI gate
  kubectl kustomize overlays/prod | kubectl diagnose preflight -f - --check-references -o json

  # A directory of manifests, as markdown for a pull request comment
  kubectl diagnose preflight -f deploy/ -o markdown`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.Complete(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return o.Run(c.Context())
		},
	}
	cmd.Flags().StringSliceVarP(&o.Filenames, "filename", "f", nil, "Manifests to check: a file, a directory (its *.yaml, *.yml and *.json, recursively) or - for stdin; repeatable.")
	cmd.Flags().BoolVar(&o.CheckReferences, "check-references", false, "Also check that the ConfigMaps and Secrets the templates name exist, by metadata only (never their data).")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "table", "Output format: "+strings.Join(preflight.Formats, "|")+".")
	return cmd
}

// Complete reads the shared flags.
func (o *PreflightOptions) Complete() error {
	return o.Source.Complete()
}

// Validate rejects flags that cannot apply to checking manifests against a live cluster.
func (o *PreflightOptions) Validate() error {
	switch {
	case len(o.Filenames) == 0:
		return usageErrorf("preflight needs manifests: pass -f FILE, -f DIR or -f -")
	case !slices.Contains(preflight.Formats, o.Output):
		return usageErrorf("unknown output format %q; use one of %s", o.Output, strings.Join(preflight.Formats, ", "))
	case o.Source.DumpPath != "":
		return usageErrorf("preflight checks against a live cluster; --dump cannot be used")
	case o.Source.AllNamespaces:
		return usageErrorf("preflight checks manifests; --all-namespaces cannot be used (a manifest's namespace, -n or the context's applies)")
	case o.Source.At != nil:
		return usageErrorf("preflight checks against the cluster as it is now; --at cannot be used")
	case countOf(o.Filenames, preflight.Stdin) > 1:
		return usageErrorf("-f - can be given once: standard input is read once")
	}
	if err := o.Source.oneContext("preflight"); err != nil {
		return err
	}
	return o.Source.Validate()
}

// connectPreflight builds the clients from the kubeconfig flags. It does not contact the server.
func connectPreflight(o *PreflightOptions) (preflight.Clients, string, error) {
	cfg, ns, err := live.Config(o.Source.ConfigFlags)
	if err != nil {
		return preflight.Clients{}, "", err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return preflight.Clients{}, "", fmt.Errorf("build client for %s: %w", cfg.Host, err)
	}
	md, err := preflight.NewMetadataReader(cfg)
	if err != nil {
		return preflight.Clients{}, "", err
	}
	return preflight.Clients{Kube: kube, Metadata: md}, ns, nil
}

// Run reads the manifests and the cluster, checks, and prints the report; a failed check
// returns a *PreflightFailedError after printing.
func (o *PreflightOptions) Run(ctx context.Context) error {
	clients, ns, err := o.connect(o)
	if err != nil {
		return err
	}
	if o.Source.Namespace != "" {
		ns = o.Source.Namespace
	}
	m, err := preflight.Read(o.Filenames, o.Source.Stdin, ns)
	if err != nil {
		return err
	}
	facts, err := preflight.Load(ctx, clients, m, o.CheckReferences)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w: %w", context.Cause(ctx), err)
		}
		return err
	}
	r := preflight.Check(m, facts)
	if err := preflight.Print(o.Out, r, o.Output); err != nil {
		return fmt.Errorf("write the preflight report: %w", err)
	}
	if r.Failed() {
		return &PreflightFailedError{Failed: r.Summary[preflight.ResultFail]}
	}
	return nil
}

func countOf(xs []string, x string) int {
	n := 0
	for _, v := range xs {
		if v == x {
			n++
		}
	}
	return n
}

// wrapIndent breaks text into lines of at most width runes, indenting every line after the
// first by indent spaces.
func wrapIndent(text string, width, indent int) string {
	var b strings.Builder
	n := 0
	for i, w := range strings.Fields(text) {
		if i > 0 && n+1+len(w) > width {
			b.WriteString("\n" + strings.Repeat(" ", indent))
			n = 0
		} else if i > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}
