// Command barelists is fleetbench's floor: it sends a fleet's lists and reads every answer to
// its end without decoding it. It uses the standard library alone, so that its process costs
// what any client must (start, TLS, HTTP/2, reading the bytes) and nothing of the tool's.
// fleetbench writes its plan (the servers, and each context's list paths in the order the tool
// reads them) and runs it: barelists PLAN BOUND.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"strconv"
	"sync"
)

// Plan is what fleetbench hands barelists, as JSON.
type Plan struct {
	Servers []Server
	// Contexts are read in this order, Bound at a time, each context's paths all at once.
	Contexts []Context
}

// Server is one API server and the bearer token that reads it.
type Server struct {
	Host, CA, Token string
}

// Context is one context's lists: paths with their query, on the server at index Server.
type Context struct {
	Server int
	Paths  []string
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) != 3 {
		return errors.New("usage: barelists PLAN BOUND")
	}
	b, err := os.ReadFile(os.Args[1])
	if err != nil {
		return err
	}
	var plan Plan
	if err := json.Unmarshal(b, &plan); err != nil {
		return err
	}
	bound, err := strconv.Atoi(os.Args[2])
	if err != nil || bound < 1 {
		return fmt.Errorf("bad bound %q", os.Args[2])
	}
	clients := make([]*http.Client, len(plan.Servers))
	gates := make([]chan struct{}, len(plan.Servers))
	// connected[i] closes once server i's first request has its connection: until then the
	// others wait, or each would dial and shake hands on its own (Go's HTTP/2 client shares a
	// connection only once it is up). The tool connects the same way.
	connected := make([]chan struct{}, len(plan.Servers))
	first := make([]sync.Once, len(plan.Servers))
	for i, s := range plan.Servers {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(s.CA)) {
			return fmt.Errorf("server %s: no CA certificate", s.Host)
		}
		clients[i] = &http.Client{Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true,
		}}
		// kube-apiserver allows 100 streams on a connection and Go's client dials again past
		// them; the tool's stream gate holds a server's requests to 90, so does this.
		gates[i] = make(chan struct{}, 90)
		connected[i] = make(chan struct{})
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		sem      = make(chan struct{}, bound)
	)
	get := func(server int, path string) error {
		gates[server] <- struct{}{}
		defer func() { <-gates[server] }()
		s := plan.Servers[server]
		ctx := context.Background()
		leader := false
		first[server].Do(func() { leader = true })
		if leader {
			var once sync.Once
			open := func() { once.Do(func() { close(connected[server]) }) }
			defer open()
			ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { open() }})
		} else {
			<-connected[server]
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.Host+path, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Accept", "application/vnd.kubernetes.protobuf,application/json")
		req.Header.Set("Authorization", "Bearer "+s.Token)
		req.Header.Set("User-Agent", "fleetbench-barelists")
		resp, err := clients[server].Do(req)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("%s%s: %s", s.Host, path, resp.Status)
		}
		return err
	}
	for _, c := range plan.Contexts {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var lists sync.WaitGroup
			for _, p := range c.Paths {
				lists.Add(1)
				go func() {
					defer lists.Done()
					if err := get(c.Server, p); err != nil {
						mu.Lock()
						if firstErr == nil {
							firstErr = err
						}
						mu.Unlock()
					}
				}()
			}
			lists.Wait()
		}()
	}
	wg.Wait()
	return firstErr
}
