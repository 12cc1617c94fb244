package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
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
	c, err := api.NewClient(api.Config{Address: cfg.URL, RoundTripper: limitBody{rt}})
	if err != nil {
		return nil, fmt.Errorf("prometheus client: %w", err)
	}
	return &Source{cfg: cfg, api: v1.NewAPI(c)}, nil
}

// maxBody bounds one answer: 2,000 workloads of 240 samples take a few MiB; a server that
// sends more is not answering a query of ours.
const maxBody = 64 << 20

// limitBody fails a response whose body grows past maxBody, so a hostile or broken server
// cannot exhaust memory.
type limitBody struct{ rt http.RoundTripper }

func (l limitBody) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &limitedBody{rc: resp.Body, left: maxBody}
	return resp, nil
}

type limitedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("answer larger than %d MiB", maxBody>>20)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n, fmt.Errorf("answer larger than %d MiB", maxBody>>20)
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

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
	rd := &reading{src: s, r: r}
	rd.run(ctx, targets(snap, s.cfg.Rules))
	sort.Slice(rd.series, func(i, j int) bool {
		a, b := rd.series[i], rd.series[j]
		if a.Workload != b.Workload {
			return keyLess(a.Workload, b.Workload)
		}
		return a.Role < b.Role
	})
	sort.SliceStable(rd.vis, func(i, j int) bool { return rd.vis[i].Reason < rd.vis[j].Reason })
	if rd.failure != nil {
		// The server went away part way: what was read is kept and the rest is said unread.
		snap.Visibility = append(snap.Visibility, s.unreachable(rd.failure))
	}
	snap.Metrics.Series = rd.series
	snap.Visibility = append(snap.Visibility, rd.vis...)
}

// reading is one Read in progress.
type reading struct {
	src *Source
	r   v1.Range

	mu      sync.Mutex
	series  []snapshot.MetricSeries
	vis     []snapshot.Visibility
	failure error
}

// pending is one workload's role still without a series, and the queries left to try.
type pending struct {
	key   snapshot.ObjectKey
	cands []candidate
	done  bool
}

// run tries the candidates in rounds: the first of every workload, then the second of those
// still without a series, and so on. In a round, workloads that share a batchable template
// are asked in one query per batchSize of them, not one each.
func (rd *reading) run(ctx context.Context, ts []target) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var ps []*pending
	rounds := 0
	for _, t := range ts {
		for _, cands := range [][]candidate{t.throughput, t.backlog} {
			if len(cands) > 0 {
				ps = append(ps, &pending{key: t.key, cands: cands})
				rounds = max(rounds, len(cands))
			}
		}
	}
	for round := range rounds {
		groups := map[candidate][]*pending{}
		var order []candidate
		for _, p := range ps {
			if p.done || round >= len(p.cands) {
				continue
			}
			c := p.cands[round]
			if _, ok := groups[c]; !ok {
				order = append(order, c)
			}
			groups[c] = append(groups[c], p)
		}
		var jobs []func()
		for _, c := range order {
			g := groups[c]
			if len(g) > 1 && batchable(c.template) {
				for i := 0; i < len(g); i += batchSize {
					chunk := g[i:min(i+batchSize, len(g))]
					jobs = append(jobs, func() { rd.batch(ctx, cancel, c, chunk) })
				}
				continue
			}
			for _, p := range g {
				jobs = append(jobs, func() { rd.one(ctx, cancel, c, p) })
			}
		}
		runJobs(ctx, jobs)
		if ctx.Err() != nil {
			return
		}
	}
}

// runJobs runs jobs on the workers and waits for them.
func runJobs(ctx context.Context, jobs []func()) {
	ch := make(chan func())
	var wg sync.WaitGroup
	for range min(workers, len(jobs)) {
		wg.Go(func() {
			for job := range ch {
				if ctx.Err() == nil {
					job()
				}
			}
		})
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
}

// fail records the first error that is the server's, not a query's, and stops the reading.
func (rd *reading) fail(cancel context.CancelFunc, err error) {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if rd.failure == nil {
		rd.failure = err
		cancel()
	}
}

// one asks one workload's query.
func (rd *reading) one(ctx context.Context, cancel context.CancelFunc, c candidate, p *pending) {
	q := Expand(c.template, p.key)
	raw, err := rd.src.rangeQuery(ctx, q, rd.r)
	if err == nil {
		err = rd.found(p, c, q, raw)
	}
	switch {
	case err == nil:
	case queryError(err):
		rd.mu.Lock()
		defer rd.mu.Unlock()
		p.done = true // a refused query is not retried with the next candidate: it was the team's own
		rd.vis = append(rd.vis, snapshot.Visibility{
			Kind: VisibilityKind, Namespace: p.key.Namespace,
			Reason: fmt.Sprintf("%s query of %s/%s refused: %v", c.role, strings.ToLower(p.key.Kind), p.key.Name, err),
		})
	default:
		rd.fail(cancel, err)
	}
}

// batch asks one query for many workloads and splits the answer; a query the server refuses is
// asked again per workload, so each refusal is said where it belongs.
func (rd *reading) batch(ctx context.Context, cancel context.CancelFunc, c candidate, ps []*pending) {
	keys := make([]snapshot.ObjectKey, len(ps))
	for i, p := range ps {
		keys[i] = p.key
	}
	raw, err := rd.src.rangeQuery(ctx, batchQuery(c.template, keys), rd.r)
	if queryError(err) {
		for _, p := range ps {
			rd.one(ctx, cancel, c, p)
		}
		return
	}
	if err != nil {
		rd.fail(cancel, err)
		return
	}
	parts, err := splitBatch(raw, keys)
	if err != nil {
		rd.fail(cancel, err)
		return
	}
	for _, p := range ps {
		if part, ok := parts[p.key]; ok {
			if err := rd.found(p, c, Expand(c.template, p.key), part); err != nil {
				rd.fail(cancel, err)
				return
			}
		}
	}
}

// found records a workload's answer when it has samples.
func (rd *reading) found(p *pending, c candidate, q string, raw json.RawMessage) error {
	samples, err := Samples(raw)
	if err != nil {
		return fmt.Errorf("query %s: %w", q, err)
	}
	if len(samples) == 0 {
		return nil
	}
	rd.mu.Lock()
	defer rd.mu.Unlock()
	p.done = true
	rd.series = append(rd.series, snapshot.MetricSeries{
		Workload: p.key, Role: c.role, Origin: c.origin, Template: c.template, Query: q, Unit: c.unit,
		Start: rd.r.Start, End: rd.r.End, Step: rd.r.Step, Result: raw, Samples: samples,
	})
	return nil
}

func (s *Source) unreachable(err error) snapshot.Visibility {
	return snapshot.Visibility{
		Kind:   VisibilityKind,
		Reason: fmt.Sprintf("%s: %v; throughput and backlog not read", s.cfg.URL, err),
	}
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
