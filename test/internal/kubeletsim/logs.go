package kubeletsim

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	certutil "k8s.io/client-go/util/cert"
)

// logServer serves the kubelet's /containerLogs/{namespace}/{pod}/{container} over HTTPS on
// loopback, for every simulated node, so that pods/log works through the API server.
func (s *Sim) startLogServer() (net.Listener, *http.Server, error) {
	crt, key, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", nil, []string{"localhost"})
	if err != nil {
		return nil, nil, fmt.Errorf("kubelet serving certificate: %w", err)
	}
	pair, err := tls.X509KeyPair(crt, key)
	if err != nil {
		return nil, nil, fmt.Errorf("kubelet serving certificate: %w", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, fmt.Errorf("kubelet log server: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", s.serveLogs)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		_ = srv.Serve(tls.NewListener(l, &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}))
	}()
	return l, srv, nil
}

// serveLogs answers like kubelet/server.getContainerLogs: 404 for unknown pods and containers,
// 400 with the kubelet's message for a container that has no logs to show.
func (s *Sim) serveLogs(rw http.ResponseWriter, r *http.Request) {
	ns, podName, container := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	q := r.URL.Query()
	w := s.workerByName(ns, podName)
	if w == nil {
		writeError(rw, http.StatusNotFound, fmt.Errorf("pod %q does not exist", podName+"_"+ns))
		return
	}
	previous := q.Get("previous") == "true"
	timestamps := q.Get("timestamps") == "true"
	lines, err := w.logLines(container, previous)
	if err != nil {
		code := http.StatusBadRequest
		if strings.Contains(err.Error(), "not found in pod") {
			code = http.StatusNotFound
		}
		writeError(rw, code, err)
		return
	}
	if v := q.Get("sinceSeconds"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			since := s.now().Add(-time.Duration(n) * time.Second)
			lines = filterSince(lines, since)
		}
	}
	if v := q.Get("sinceTime"); v != "" {
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			lines = filterSince(lines, t)
		}
	}
	if v := q.Get("tailLines"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 && n < len(lines) {
			lines = lines[len(lines)-n:]
		}
	}
	var b strings.Builder
	for _, l := range lines {
		if timestamps {
			b.WriteString(l.t.UTC().Format(time.RFC3339Nano))
			b.WriteByte(' ')
		}
		b.WriteString(l.text)
		b.WriteByte('\n')
	}
	out := b.String()
	if v := q.Get("limitBytes"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 && n < len(out) {
			out = out[:n]
		}
	}
	rw.Header().Set("Content-Type", "text/plain")
	_, _ = rw.Write([]byte(out))
}

func filterSince(lines []logLine, since time.Time) []logLine {
	for i, l := range lines {
		if !l.t.Before(since) {
			return lines[i:]
		}
	}
	return nil
}

// logLines picks the container instance like kubelet_pods.go validateContainerLogStatus.
func (w *podWorker) logLines(name string, previous bool) ([]logLine, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var c *ctr
	for _, x := range append(append([]*ctr{}, w.init...), w.ctrs...) {
		if x.spec.Name == name {
			c = x
		}
	}
	podName := w.pod.Name
	if c == nil {
		return nil, fmt.Errorf("container %q not found in pod %q", name, podName+"_"+w.pod.Namespace)
	}
	st := w.containerStatus(c)
	last := st.LastTerminationState.Terminated
	switch {
	case previous:
		if last == nil || last.ContainerID == "" {
			return nil, fmt.Errorf("previous terminated container %q in pod %q not found", name, podName)
		}
		if c.running {
			return append([]logLine(nil), c.prevLogs...), nil
		}
		return append([]logLine(nil), c.logs...), nil
	case st.State.Running != nil, st.State.Terminated != nil:
		return append([]logLine(nil), c.logs...), nil
	case last != nil:
		// Waiting to restart: the logs of the instance that exited.
		return append([]logLine(nil), c.logs...), nil
	case st.State.Waiting != nil:
		switch reason := st.State.Waiting.Reason; reason {
		case "ErrImagePull":
			return nil, fmt.Errorf("container %q in pod %q is waiting to start: image can't be pulled", name, podName)
		case "ImagePullBackOff":
			return nil, fmt.Errorf("container %q in pod %q is waiting to start: trying and failing to pull image", name, podName)
		default:
			return nil, fmt.Errorf("container %q in pod %q is waiting to start: %v", name, podName, reason)
		}
	}
	return nil, fmt.Errorf("container %q in pod %q is waiting to start - no logs yet", name, podName)
}

// writeError is go-restful's Response.WriteError: the message as plain text, no newline.
func writeError(rw http.ResponseWriter, code int, err error) {
	rw.Header().Set("Content-Type", "text/plain")
	rw.WriteHeader(code)
	_, _ = rw.Write([]byte(err.Error()))
}
