package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/live"
	"github.com/kubediagnose/kubectl-diagnose/internal/report"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
	"github.com/kubediagnose/kubectl-diagnose/tui"
)

// DefaultMaxParallelContexts is how many contexts a fleet reads at once by default. A read in
// flight holds its cluster's lists in memory until it is diagnosed (about 30 KiB per pod with
// the engine's indexes) and a request per kind open; 8 keeps a fleet of large clusters within
// a laptop's memory, and a fleet of up to 8 reads in the time of its slowest member. Many
// small clusters read faster with --max-parallel-contexts raised; the contexts of one server
// stay on one connection whatever the bound (live's stream gate).
const DefaultMaxParallelContexts = 8

// FleetOptions are the flags that read several clusters: --context a,b,c and --all-contexts.
type FleetOptions struct {
	// AllContexts is --all-contexts: every context of the merged kubeconfig, sorted.
	AllContexts bool
	// MaxParallel is --max-parallel-contexts.
	MaxParallel int
	// Contexts are the contexts to read, resolved by Complete; nil means one context, the one
	// the kubeconfig flags name, read as ever.
	Contexts []string
	// kubeconfig is the kubeconfig Complete read, which every context's source is built from.
	kubeconfig *live.Kubeconfig
}

// On reports whether several contexts are to be read.
func (f *FleetOptions) On() bool { return f.Contexts != nil }

// AddFleetFlags binds --all-contexts and --max-parallel-contexts, for the commands that read a
// fleet (audit and the console); --context is the kubeconfig flag, which takes a list there.
func (o *SourceOptions) AddFleetFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Fleet.AllContexts, "all-contexts", false, "Read every context of the kubeconfig, sorted by name, in parallel: one section per context. Not with --context.")
	fs.IntVar(&o.Fleet.MaxParallel, "max-parallel-contexts", DefaultMaxParallelContexts, "With several contexts (--context a,b or --all-contexts), how many are read at once.")
}

// completeFleet resolves --context a,b,c and --all-contexts into Fleet.Contexts. A --context
// without a comma, or one naming a context whose name holds a comma, is one context, and
// nothing about it changes.
func (o *SourceOptions) completeFleet() error {
	o.Fleet.Contexts = nil
	raw := ""
	if o.ConfigFlags.Context != nil {
		raw = *o.ConfigFlags.Context
	}
	if !o.Fleet.AllContexts && !strings.Contains(raw, ",") {
		return nil
	}
	if o.Fleet.AllContexts && raw != "" {
		return usageErrorf("--all-contexts and --context cannot be used together")
	}
	// The kubeconfig is read and parsed here, once: every context's source is built from it.
	kc, err := live.LoadKubeconfig(o.ConfigFlags)
	if err != nil {
		return err
	}
	if raw != "" && kc.Has(raw) {
		return nil
	}
	known := kc.Contexts()
	if o.Fleet.AllContexts {
		if len(known) == 0 {
			return fmt.Errorf("--all-contexts: the kubeconfig holds no context; set KUBECONFIG or pass --kubeconfig")
		}
		o.Fleet.Contexts, o.Fleet.kubeconfig = known, kc
		return nil
	}
	var names, missing []string
	for _, n := range strings.Split(raw, ",") {
		n = strings.TrimSpace(n)
		if n == "" || slices.Contains(names, n) {
			continue
		}
		if !kc.Has(n) {
			missing = append(missing, fmt.Sprintf("%q", n))
		}
		names = append(names, n)
	}
	if len(missing) > 0 {
		return fmt.Errorf("context %s not in the kubeconfig; it holds %s", strings.Join(missing, ", "), listOrNoContext(known))
	}
	if len(names) == 0 {
		return usageErrorf("--context %q names no context", raw)
	}
	o.Fleet.Contexts, o.Fleet.kubeconfig = names, kc
	return nil
}

func listOrNoContext(names []string) string {
	if len(names) == 0 {
		return "no context"
	}
	return strings.Join(names, ", ")
}

// validateFleet rejects what cannot apply to several clusters.
func (o *SourceOptions) validateFleet() error {
	if o.Fleet.MaxParallel < 1 {
		return usageErrorf("invalid --max-parallel-contexts %d: want 1 or more", o.Fleet.MaxParallel)
	}
	if !o.Fleet.On() {
		return nil
	}
	switch {
	case o.DumpPath != "":
		return usageErrorf("several contexts are read from their clusters; --dump reads one dump")
	case o.Metrics.Config != nil:
		return usageErrorf("--prometheus reads one cluster's metrics; it cannot be used with several contexts")
	}
	return nil
}

// oneContext rejects a list of contexts for a command that reads one cluster.
func (o *SourceOptions) oneContext(command string) error {
	if o.Fleet.On() {
		return usageErrorf("%s reads one cluster; --context takes one name here, not %q", command, strings.Join(o.Fleet.Contexts, ","))
	}
	return nil
}

// forContext returns the source options of one context of the fleet: the same flags, the
// context replaced.
func (o *SourceOptions) forContext(name string) *SourceOptions {
	c := *o
	c.ConfigFlags = flagsForContext(o.ConfigFlags, name)
	c.Fleet = FleetOptions{MaxParallel: o.Fleet.MaxParallel}
	c.fleetKubeconfig = o.Fleet.kubeconfig
	return &c
}

// oneRead returns the source options of one read of the fleet (an audit, a console's refresh):
// the contexts opened from them that reach one server with one identity list its Nodes once
// between them (live.Kubeconfig.OneRead). A watch is never opened from them: its Nodes must
// stay its own.
func (o *SourceOptions) oneRead() *SourceOptions {
	c := *o
	if o.Fleet.kubeconfig != nil {
		c.Fleet.kubeconfig = o.Fleet.kubeconfig.OneRead()
	}
	return &c
}

// flagsForContext copies the kubeconfig flags with another context. ConfigFlags caches the
// client config it builds, so each context needs flags of its own.
func flagsForContext(base *genericclioptions.ConfigFlags, name string) *genericclioptions.ConfigFlags {
	f := genericclioptions.NewConfigFlags(true)
	f.CacheDir, f.KubeConfig = base.CacheDir, base.KubeConfig
	f.ClusterName, f.AuthInfoName, f.Namespace, f.APIServer = base.ClusterName, base.AuthInfoName, base.Namespace, base.APIServer
	f.TLSServerName, f.Insecure, f.CertFile, f.KeyFile, f.CAFile = base.TLSServerName, base.Insecure, base.CertFile, base.KeyFile, base.CAFile
	f.BearerToken, f.Username, f.Password = base.BearerToken, base.Username, base.Password
	f.Impersonate, f.ImpersonateUID, f.ImpersonateGroup, f.ImpersonateUserExtra = base.Impersonate, base.ImpersonateUID, base.ImpersonateGroup, base.ImpersonateUserExtra
	f.Timeout, f.DisableCompression, f.ProxyURL, f.WrapConfigFn = base.Timeout, base.DisableCompression, base.ProxyURL, base.WrapConfigFn
	f.Context = &name
	return f
}

// eachContextIn calls read once for every name, at most limit at a time, starting the reads in
// the order of order, indexes into names (nil: the order of names), and returns the results in
// the order of names whatever order the reads end in. A read that fails is its own result: every
// name gets its call.
func eachContextIn[T any](ctx context.Context, names []string, order []int, limit int, read func(ctx context.Context, name string) T) []T {
	if order == nil {
		order = make([]int, len(names))
		for i := range order {
			order[i] = i
		}
	}
	out := make([]T, len(names))
	sem := make(chan struct{}, max(limit, 1))
	var wg sync.WaitGroup
	for _, i := range order {
		name := names[i]
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i] = read(ctx, name)
		}()
	}
	wg.Wait()
	return out
}

// contextRead is what reading one context of a fleet gave.
type contextRead struct {
	report.Section
	// namespace names the one namespace read, for the "no workloads" notice.
	namespace string
	// err is why the context could not be read; its report then holds it as the one line of
	// visibility.
	err error
	// notes and unresolved are what narrowing the report to the command's arguments said (pick).
	notes      []string
	unresolved []unresolved
}

// readFleet reads and diagnoses every context of the fleet, in parallel within the bound.
// progress, when set, draws how many contexts are read on a terminal's stderr.
// Each context's report is narrowed to the workloads targets name (pick).
func (o *SourceOptions) readFleet(ctx context.Context, open func(name string) (*openedSource, error), now func() time.Time, progress io.Writer, targets []target) []contextRead {
	read := func(ctx context.Context, name string) contextRead {
		src, err := open(name)
		if err != nil {
			return unreadContext(name, "", err, o.referenceTime(now))
		}
		snap, r, err := src.diagnose(ctx)
		if err != nil {
			return unreadContext(name, src.server(), err, o.referenceTime(now))
		}
		ns := src.namespaceLabel(o)
		p := pick(snap, r, targets, ns)
		return contextRead{
			Section:   report.Section{Context: name, Report: p.report, Templates: report.TemplatesOf(snap), Labels: report.LabelsOf(snap)},
			namespace: ns, notes: p.notes, unresolved: p.unresolved,
		}
	}
	if progress == nil {
		return eachContextIn(ctx, o.Fleet.Contexts, o.readOrder(), o.Fleet.MaxParallel, read)
	}
	line := &progressLine{w: progress, start: now(), now: now}
	line.report("contexts", 0)
	var mu sync.Mutex
	done := 0
	stop := make(chan struct{})
	ticked := make(chan struct{})
	go func() {
		defer close(ticked)
		t := time.NewTicker(progressTick)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				line.draw()
			}
		}
	}()
	out := eachContextIn(ctx, o.Fleet.Contexts, o.readOrder(), o.Fleet.MaxParallel, func(ctx context.Context, name string) contextRead {
		r := read(ctx, name)
		mu.Lock()
		done++
		n := done
		mu.Unlock()
		line.report("contexts", n)
		return r
	})
	close(stop)
	<-ticked
	line.erase()
	return out
}

// readOrder is the order in which the fleet's contexts are read: the first context of every
// server, then the second of each, and so on. Behind a long round trip a server's first
// connection costs two round trips (TCP, then TLS), and every later context of that server
// reuses it; read in the order named, where a server's contexts usually stand together, the
// servers named last would wait for the bound's later rounds to connect, each a round of its
// own. Interleaved, the first round connects to as many servers as the bound allows at once.
// nil keeps the order named.
func (o *SourceOptions) readOrder() []int {
	if o.Fleet.kubeconfig == nil {
		return nil
	}
	var servers []string
	byServer := map[string][]int{}
	for i, name := range o.Fleet.Contexts {
		s := o.Fleet.kubeconfig.Server(name)
		if _, ok := byServer[s]; !ok {
			servers = append(servers, s)
		}
		byServer[s] = append(byServer[s], i)
	}
	order := make([]int, 0, len(o.Fleet.Contexts))
	for round := 0; len(order) < len(o.Fleet.Contexts); round++ {
		for _, s := range servers {
			if round < len(byServer[s]) {
				order = append(order, byServer[s][round])
			}
		}
	}
	return order
}

func (o *SourceOptions) referenceTime(now func() time.Time) time.Time {
	if o.At != nil {
		return *o.At
	}
	return now().UTC().Truncate(time.Second)
}

// unreadContext is the section of a context that could not be read: a report with no workload
// and one visibility line saying why.
func unreadContext(name, server string, err error, at time.Time) contextRead {
	r := &diagnose.Report{
		APIVersion: diagnose.APIVersion, Kind: diagnose.ReportKind, ReferenceTime: at,
		Source:     snapshot.SourceInfo{Type: snapshot.SourceLive, Context: name, Server: server},
		Visibility: []snapshot.Visibility{{Reason: strings.Join(strings.Fields(err.Error()), " ")}},
		Summary:    map[diagnose.Shape]int{},
	}
	return contextRead{Section: report.Section{Context: name, Report: r}, err: err}
}

// server is the API server URL of a live source, "" for another.
func (s *openedSource) server() string {
	if i, ok := s.live.(interface{ Info() snapshot.SourceInfo }); ok {
		return i.Info().Server
	}
	return ""
}

// UnreadContextsError says some contexts of a fleet could not be read; it exits 1. Every other
// context has been printed.
type UnreadContextsError struct {
	Unread []string
	Total  int
}

func (e *UnreadContextsError) Error() string {
	return fmt.Sprintf("could not read %d of %d contexts: %s (see the warnings above)", len(e.Unread), e.Total, strings.Join(e.Unread, ", "))
}

// runFleet reads every context and prints them as one document. The exit code covers the
// fleet: 3 when a workload of any context matches --fail-on, else 1 when a context could not
// be read or --fail-on could not see a workload kind, else 0.
func (o *AuditOptions) runFleet(ctx context.Context) error {
	open := o.openContext
	if open == nil {
		// One audit is one read: its contexts of one server and identity share their Nodes.
		read := o.Source.oneRead()
		open = func(name string) (*openedSource, error) { return read.forContext(name).open() }
	}
	reads := o.Source.readFleet(ctx, open, o.now, progressTo(o.ErrOut), o.Targets)
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return o.printFleet(reads)
}

func (o *AuditOptions) printFleet(reads []contextRead) error {
	secs := make([]report.Section, 0, len(reads))
	rows := 0
	for _, rd := range reads {
		prefix := "context " + report.Clean(rd.Context) + ": "
		if err := warnVisibilityIn(o.ErrOut, prefix, rd.Report.Visibility); err != nil {
			return err
		}
		if err := o.printNotes(prefix, rd.notes); err != nil {
			return err
		}
		secs = append(secs, rd.Section)
		rows += len(rd.Report.Workloads)
	}
	if report.RowFormat(o.Output) {
		for _, rd := range reads {
			if rd.err == nil && len(rd.Report.Workloads) == 0 && !named(o.Targets) {
				if _, err := fmt.Fprintf(o.ErrOut, "context %s: %s\n", report.Clean(rd.Context), noWorkloadsNotice(rd.namespace)); err != nil {
					return fmt.Errorf("write notice: %w", err)
				}
			}
		}
	}
	if rows > 0 || !report.RowFormat(o.Output) {
		p, err := report.NewFleetPrinter(o.Output, o.printOptions(nil))
		if err != nil {
			return err
		}
		if err := p.PrintFleet(o.Out, secs); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
	}
	return fleetExit(reads, o.FailOn, o.Targets)
}

// fleetExit is the error a fleet's run ends with, the fleet taken whole: a named workload found
// in no context that could be read is an error, as one context's would be.
func fleetExit(reads []contextRead, shapes map[diagnose.Shape]bool, targets []target) error {
	matched := map[diagnose.Shape]int{}
	var in, unread []string
	for _, rd := range reads {
		var fo *FailOnError
		if err := failOn(rd.Report, shapes); err != nil && errors.As(err, &fo) {
			for s, n := range fo.Matched {
				matched[s] += n
			}
			in = append(in, rd.Context)
		}
		if rd.err != nil {
			unread = append(unread, report.Clean(rd.Context))
		}
	}
	if len(matched) > 0 {
		return &FailOnError{Matched: matched, Contexts: in}
	}
	if len(unread) > 0 {
		return &UnreadContextsError{Unread: unread, Total: len(reads)}
	}
	if err := unresolvedInFleet(reads, targets); err != nil {
		return err
	}
	for _, rd := range reads {
		if err := failOnUnseen(rd.Report.Visibility, shapes, targets); err != nil {
			return fmt.Errorf("context %s: %w", report.Clean(rd.Context), err)
		}
	}
	return nil
}

// unresolvedInFleet says which named targets stand for a workload in no context, with why in
// the first context read.
func unresolvedInFleet(reads []contextRead, targets []target) error {
	var msgs []string
	for _, t := range targets {
		if t.Name == "" {
			continue
		}
		why, missing := "", true
		for _, rd := range reads {
			if rd.err != nil {
				continue
			}
			var u *unresolved
			for i := range rd.unresolved {
				if rd.unresolved[i].target == t {
					u = &rd.unresolved[i]
					break
				}
			}
			if u == nil {
				missing = false
				break
			}
			if why == "" || (u.err != nil && !strings.HasPrefix(why, "context ")) {
				why = fmt.Sprintf("%s not found in any context", t)
				if u.err != nil {
					why = fmt.Sprintf("context %s: %v", report.Clean(rd.Context), u.err)
				}
			}
		}
		if missing && why != "" {
			msgs = append(msgs, why)
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return errors.New(strings.Join(msgs, "; "))
}

// runFleet opens the console over every context on a terminal, and prints the fleet's audit
// table otherwise.
func (o *RootOptions) runFleet(ctx context.Context) error {
	if o.Interactive() {
		return o.Console(ctx, o.fleetConsoleOptions())
	}
	audit := &AuditOptions{IOStreams: o.IOStreams, Source: o.Source, Output: "table", now: time.Now}
	return audit.runFleet(ctx)
}

// fleetConsoleOptions are the console's options over several contexts: each context follows
// its own watch, and a refresh reads every context again, in parallel within the bound.
func (o *RootOptions) fleetConsoleOptions() tui.Options {
	names := o.Source.Fleet.Contexts
	label := strings.Join(names, ",")
	if len(names) > 3 {
		label = fmt.Sprintf("%d contexts", len(names))
	}
	source := o.Source
	watches := make([]tui.ContextWatch, len(names))
	firstReads := make(chan struct{}, max(source.Fleet.MaxParallel, 1))
	for i, name := range names {
		// Building a source reads nothing: the kubeconfig was read once, by Complete.
		src, err := source.forContext(name).open()
		if err != nil {
			watches[i] = tui.ContextWatch{Context: name, Watch: failedWatch(err)}
			continue
		}
		watches[i] = tui.ContextWatch{Context: name, Watch: boundedFirstRead(firstReads, src.consoleWatch)}
	}
	return tui.Options{
		In: o.In, Out: o.Out, At: source.At,
		Namespaces: source.namespaces(), AllNamespaces: source.AllNamespaces,
		SourceLabel: "live", Context: label,
		ShowSecrets: source.ShowSecrets,
		WatchFleet:  watches,
		ReadFleet: func(ctx context.Context) []tui.ContextSnapshot {
			read := source.oneRead()
			return eachContextIn(ctx, names, source.readOrder(), source.Fleet.MaxParallel, func(ctx context.Context, name string) tui.ContextSnapshot {
				src, err := read.forContext(name).open()
				if err != nil {
					return tui.ContextSnapshot{Context: name, Err: err}
				}
				snap, err := src.Snapshot(ctx)
				return tui.ContextSnapshot{Context: name, Snapshot: snap, Err: err}
			})
		},
	}
}

// failedWatch is the watch of a context whose source could not be built: it says why once and
// stays open, so the console shows the context as unreadable without retrying what cannot work.
func failedWatch(err error) tui.WatchFunc {
	return func(ctx context.Context, _ snapshot.WatchHooks) (<-chan *snapshot.Snapshot, <-chan error) {
		snaps, errs := make(chan *snapshot.Snapshot), make(chan error, 1)
		errs <- err
		go func() {
			<-ctx.Done()
			close(snaps)
			close(errs)
		}()
		return snaps, errs
	}
}

// boundedFirstRead lets at most cap(slots) contexts' first reads run at once, as
// --max-parallel-contexts bounds an audit's: a context takes a slot before its watch starts and
// gives it back as soon as the watch says something, its first snapshot or an error (a
// context that fails holds up the others for one attempt, not for its outage). The watch's
// snapshots are passed on newest first, as the watch itself does.
func boundedFirstRead(slots chan struct{}, watch tui.WatchFunc) tui.WatchFunc {
	return func(ctx context.Context, hooks snapshot.WatchHooks) (<-chan *snapshot.Snapshot, <-chan error) {
		snaps, errs := make(chan *snapshot.Snapshot, 1), make(chan error, 8)
		go func() {
			defer close(snaps)
			defer close(errs)
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			held := true
			release := func() {
				if held {
					held = false
					<-slots
				}
			}
			defer release()
			in, inErrs := watch(ctx, hooks)
			for in != nil || inErrs != nil {
				select {
				case s, ok := <-in:
					if !ok {
						in = nil
						continue
					}
					release()
					select {
					case snaps <- s:
					default:
						// The console has not taken the last one: the newer replaces it.
						select {
						case <-snaps:
						default:
						}
						snaps <- s
					}
				case err, ok := <-inErrs:
					if !ok {
						inErrs = nil
						continue
					}
					release()
					select {
					case errs <- err:
					default: // the console is behind; it has seen enough errors of this kind
					}
				}
			}
		}()
		return snaps, errs
	}
}
