package cmd

import (
	"context"

	"github.com/kubediagnose/kubectl-diagnose/internal/live"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// openLive opens the cluster the kubeconfig flags name. It does not contact the server yet.
func openLive(o *SourceOptions) (*openedSource, error) {
	opts := live.Options{Namespaces: o.namespaces(), AllNamespaces: o.AllNamespaces, Selector: o.Selector, AfterFirstRead: o.settleMemory}
	var (
		src *live.Source
		err error
	)
	if kc := o.fleetKubeconfig; kc != nil && o.ConfigFlags.Context != nil {
		src, err = kc.Source(*o.ConfigFlags.Context, opts)
	} else {
		src, err = live.New(o.ConfigFlags, opts)
	}
	if err != nil {
		return nil, err
	}
	flags := o.ConfigFlags
	// The console reads the live source itself (progress, watches); the watch carries the
	// Prometheus readings to it.
	withMetrics, err := o.Metrics.liveWrap()
	if err != nil {
		return nil, err
	}
	consoleWatch := func(ctx context.Context, hooks snapshot.WatchHooks) (<-chan *snapshot.Snapshot, <-chan error) {
		return withMetrics(func(ctx context.Context) (<-chan *snapshot.Snapshot, <-chan error) {
			return src.WatchWith(ctx, hooks)
		})(ctx)
	}
	return &openedSource{
		Source:         &scopedSource{src: src, at: o.At, selector: o.Selector},
		Label:          "live",
		Context:        src.Info().Context,
		live:           src,
		liveNamespaces: src.Namespaces(),
		watch:          withMetrics(src.Watch),
		consoleWatch:   consoleWatch,
		listNamespaces: src.NamespaceNames,
		switchNamespace: func(ns string) snapshot.Source {
			s, err := live.New(flags, live.Options{Namespaces: []string{ns}, Selector: o.Selector, AfterFirstRead: o.settleMemory})
			if err != nil {
				return failedSource{err: err}
			}
			return s
		},
	}, nil
}

// failedSource is a source that could not be built; reading it returns why.
type failedSource struct{ err error }

func (f failedSource) Snapshot(context.Context) (*snapshot.Snapshot, error) { return nil, f.err }
