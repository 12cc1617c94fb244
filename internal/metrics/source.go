package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	promconfig "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// VisibilityKind is the kind of the visibility entries this source writes.
const VisibilityKind = "Prometheus"

// workers bounds the queries in flight, so a namespace of many workloads does not flood the
// server.
const workers = 4

// Source queries one Prometheus. It is safe for concurrent use.
type Source struct {
	cfg Config
	api v1.API
}

// New builds the client; it does not contact the server.
func New(cfg Config) (*Source, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	hc := promconfig.HTTPClientConfig{
		TLSConfig: promconfig.TLSConfig{
			CAFile: cfg.TLS.CAFile, CertFile: cfg.TLS.CertFile, KeyFile: cfg.TLS.KeyFile,
			ServerName: cfg.TLS.ServerName, InsecureSkipVerify: cfg.TLS.InsecureSkipVerify,
		},
		FollowRedirects: true,
		EnableHTTP2:     true,
	}
	if cfg.BearerTokenFile != "" {
		hc.Authorization = &promconfig.Authorization{Type: "Bearer", CredentialsFile: cfg.BearerTokenFile}
	}
	if cfg.Username != "" {
		hc.BasicAuth = &promconfig.BasicAuth{Username: cfg.Username, PasswordFile: cfg.PasswordFile}
	}
	if err := hc.Validate(); err != nil {
		return nil, fmt.Errorf("prometheus client: %w", err)
	}
	rt, err := promconfig.NewRoundTripperFromConfig(hc, "kubectl-diagnose")
	if err != nil {
		return nil, fmt.Errorf("prometheus client: %w", err)
	}
	c, err := api.NewClient(api.Config{Address: cfg.URL, RoundTripper: rt})
	if err != nil {
		return nil, fmt.Errorf("prometheus client: %w", err)
	}
	return &Source{cfg: cfg, api: v1.NewAPI(c)}, nil
}

// URL is the server queried.
func (s *Source) URL() string { return s.cfg.URL }

// Read queries the throughput and backlog of every workload of snap, over the window ending
// at its reference time, and records them in snap.Metrics. A server that cannot be reached or
// answers too slowly ends the reading with one visibility entry; a query the server refuses
// (a malformed annotation) is a visibility entry of its workload's namespace. Read never
// fails: the diagnosis goes on with what was read.
func (s *Source) Read(ctx context.Context, snap *snapshot.Snapshot) {
	snap.Metrics = &snapshot.Metrics{Source: s.cfg.URL}
	end := snap.ReferenceTime
	if end.IsZero() {
		end = time.Now()
	}
	r := v1.Range{Start: end.Add(-s.cfg.Window), End: end, Step: s.cfg.Step}
	// One cheap instant query first: an unreachable server costs one timeout, not one per workload.
	if _, err := s.instant(ctx, "vector(1)", end); err != nil {
		snap.Visibility = append(snap.Visibility, s.unreachable(err))
		return
	}
	ts := targets(snap, s.cfg.Rules)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu      sync.Mutex
		series  []snapshot.MetricSeries
		vis     []snapshot.Visibility
		failure error
		jobs    = make(chan func(), workers)
		wg      sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if failure == nil {
			failure = err
			cancel()
		}
	}
	for range workers {
		wg.Go(func() {
			for job := range jobs {
				job()
			}
		})
	}
	for _, t := range ts {
		for _, cands := range [][]candidate{t.throughput, t.backlog} {
			if len(cands) == 0 {
				continue
			}
			jobs <- func() {
				if ctx.Err() != nil {
					return
				}
				m, err := s.first(ctx, t.key, cands, r)
				if err != nil && !queryError(err) {
					fail(err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					vis = append(vis, snapshot.Visibility{Kind: VisibilityKind, Namespace: t.key.Namespace,
						Reason: fmt.Sprintf("%s query of %s/%s refused: %v", cands[0].role, strings.ToLower(t.key.Kind), t.key.Name, err)})
				case m != nil:
					series = append(series, *m)
				}
			}
		}
	}
	close(jobs)
	wg.Wait()
	sort.Slice(series, func(i, j int) bool {
		a, b := series[i], series[j]
		if a.Workload != b.Workload {
			return keyLess(a.Workload, b.Workload)
		}
		return a.Role < b.Role
	})
	sort.SliceStable(vis, func(i, j int) bool { return vis[i].Reason < vis[j].Reason })
	if failure != nil {
		// The server went away part way: what was read is kept and the rest is said unread.
		snap.Visibility = append(snap.Visibility, s.unreachable(failure))
	}
	snap.Metrics.Series = series
	snap.Visibility = append(snap.Visibility, vis...)
}

func (s *Source) unreachable(err error) snapshot.Visibility {
	return snapshot.Visibility{Kind: VisibilityKind,
		Reason: fmt.Sprintf("%s: %v; throughput and backlog not read", s.cfg.URL, err)}
}

// first runs the candidates in order and returns the first with a series; nil when none has.
func (s *Source) first(ctx context.Context, w snapshot.ObjectKey, cands []candidate, r v1.Range) (*snapshot.MetricSeries, error) {
	for _, c := range cands {
		q := Expand(c.template, w)
		raw, err := s.rangeQuery(ctx, q, r)
		if err != nil {
			return nil, err
		}
		samples, err := Samples(raw)
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", q, err)
		}
		if len(samples) == 0 {
			continue
		}
		return &snapshot.MetricSeries{
			Workload: w, Role: c.role, Origin: c.origin, Template: c.template, Query: q, Unit: c.unit,
			Start: r.Start, End: r.End, Step: r.Step, Result: raw, Samples: samples,
		}, nil
	}
	return nil, nil
}

func (s *Source) instant(ctx context.Context, q string, at time.Time) (model.Value, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	v, _, _, err := s.api.Query(ctx, q, at, v1.WithTimeout(s.cfg.Timeout))
	if err != nil {
		return nil, timeoutError(ctx, err, s.cfg.Timeout)
	}
	return v, nil
}

// rangeQuery runs one range query and returns its result as the API wrote it.
func (s *Source) rangeQuery(ctx context.Context, q string, r v1.Range) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	v, _, _, err := s.api.QueryRange(ctx, q, r, v1.WithTimeout(s.cfg.Timeout))
	if err != nil {
		return nil, timeoutError(ctx, err, s.cfg.Timeout)
	}
	if v.Type() != model.ValMatrix {
		return nil, &v1.Error{Type: v1.ErrBadData, Msg: fmt.Sprintf("query %s returned a %s, not a range of samples", q, v.Type())}
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", q, err)
	}
	return raw, nil
}

// timeoutError says "did not answer within" for a query that ran out of its own time.
func timeoutError(ctx context.Context, err error, d time.Duration) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("no answer within %s: %w", d, err)
	}
	return err
}

// queryError reports an error that belongs to the query (the server parsed or ran it and said
// no), rather than to the server or the way to it.
func queryError(err error) bool {
	var e *v1.Error
	return errors.As(err, &e) && (e.Type == v1.ErrBadData || e.Type == v1.ErrExec)
}

// Samples sums a matrix, as the API returns it, over its series per timestamp; the result is
// ordered by time. An empty matrix has no samples.
func Samples(raw json.RawMessage) ([]snapshot.Sample, error) {
	var m model.Matrix
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("read range result: %w", err)
	}
	sum := map[model.Time]float64{}
	for _, ss := range m {
		for _, p := range ss.Values {
			sum[p.Timestamp] += float64(p.Value)
		}
	}
	out := make([]snapshot.Sample, 0, len(sum))
	for t, v := range sum {
		out = append(out, snapshot.Sample{Time: t.Time().UTC(), Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out, nil
}

func keyLess(a, b snapshot.ObjectKey) bool {
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	return a.Kind < b.Kind
}
